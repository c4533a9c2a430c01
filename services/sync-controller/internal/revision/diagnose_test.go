package revision

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestDiagnose_AnUnhealthyRolloutIsExplainedOnceAndClearedWhenHealthy: a
// Deployment whose Pods cannot be scheduled fails its rollout on its
// progress deadline; status.diagnosis then holds the chain down to the Pod
// and the scheduler's message, one Diagnosed Event names it and is
// counted, re-checks of the same state change nothing, and once the Pods
// run the Revision is Healthy, the diagnosis is gone and stays gone.
func TestDiagnose_AnUnhealthyRolloutIsExplainedOnceAndClearedWhenHealthy(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o := defaultOptions()
	o.DriftResyncInterval = time.Second
	e.startController(o)
	e.createApplication("api", nil)
	deployment := e.gatedDeployment("api")
	deployment.Object["spec"].(map[string]any)["progressDeadlineSeconds"] = int64(2)
	name := e.publish("api", deployment)

	rev := e.waitForRevision(name, "a diagnosis of the failed rollout", func(rev *syncv1.Revision) bool {
		return rev.Status.Phase == syncv1.PhaseFailed && rev.Status.Diagnosis != nil
	})
	d := rev.Status.Diagnosis
	var kinds []string
	for _, l := range d.Causes[0].Chain {
		kinds = append(kinds, l.Kind)
	}
	root := d.Causes[0].Chain[len(d.Causes[0].Chain)-1].Message
	if len(d.Causes) != 1 || strings.Join(kinds, ",") != "Deployment,ReplicaSet,Pod" || !contains(root, "Pending and unschedulable", "didn't match Pod's node affinity/selector") {
		t.Fatalf("diagnosis %+v, want Deployment -> ReplicaSet -> Pod unschedulable by its node selector", d)
	}

	// Re-checks every second while the Pods stay unschedulable.
	time.Sleep(5 * time.Second)
	again := e.revision(name)
	if !equality.Semantic.DeepEqual(again.Status.Diagnosis, d) {
		t.Errorf("a re-check of the same state changed the diagnosis:\n%+v\nwas\n%+v", again.Status.Diagnosis, d)
	}
	events := e.events("api", syncv1.ReasonDiagnosed)
	if occurrences(events) != 1 || events[0].Type != "Warning" || !strings.Contains(events[0].Note, root) {
		t.Fatalf("Diagnosed Events %+v, want one Warning naming %q", events, root)
	}
	if n := metricValue(t, "kuvryn_sync_lifecycle_events_total", map[string]string{"namespace": e.ns, "reason": syncv1.ReasonDiagnosed}); n != 1 {
		t.Errorf("kuvryn_sync_lifecycle_events_total{reason=Diagnosed} = %v, want 1", n)
	}

	e.openGate()
	e.waitForRevision(name, "the diagnosis cleared once Healthy", func(rev *syncv1.Revision) bool {
		return rev.Status.Health == syncv1.HealthHealthy && rev.Status.Diagnosis == nil
	})
	// Pods on their way to Ready may show another cause for a moment (a new
	// Event then is right); once Healthy, nothing more is diagnosed.
	settled := occurrences(e.events("api", syncv1.ReasonDiagnosed))
	time.Sleep(3 * time.Second)
	if n := occurrences(e.events("api", syncv1.ReasonDiagnosed)); n != settled {
		t.Errorf("%d Diagnosed Events while Healthy, want still %d", n, settled)
	}
	if d := e.revision(name).Status.Diagnosis; d != nil {
		t.Errorf("a Healthy Revision keeps a diagnosis: %+v", d)
	}
}
