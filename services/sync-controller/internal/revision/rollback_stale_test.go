package revision

import (
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// The guide: a rollback request approves the Revision it names only while
// that Revision's desired state is the one recorded with the request. A
// request recorded with another desired state (forged while webhooks were
// off, say) is ignored: the Application rolls on as if it were absent.
func TestRollback_RequestWhoseRecordedDesiredStateDiffersIsIgnored(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startController(defaultOptions())
	e.createApplication("shop", nil)
	good := e.publish("shop", settings(t, "blue"))
	e.waitForPhase(good, syncv1.PhaseHealthy)
	bad := e.publish("shop", settings(t, "red"))
	e.waitForPhase(bad, syncv1.PhaseHealthy)

	app := e.application("shop")
	patch := client.MergeFrom(app.DeepCopy())
	app.Annotations = map[string]string{
		syncv1.RollbackRequestedAnnotation:    good,
		syncv1.RollbackRequestedByAnnotation:  "mallory",
		syncv1.RollbackRequestedAtAnnotation:  time.Now().UTC().Format(time.RFC3339),
		syncv1.RollbackDesiredStateAnnotation: e.revision(bad).Spec.DesiredState.Digest,
	}
	must(t, admin.Patch(t.Context(), app, patch))
	// A reconcile that sees the request acts on it before anything else
	// (it is its own approval), so by the time the next desired state is
	// deployed an honoured request would have rolled back first.
	next := e.publish("shop", settings(t, "green"))
	eventually(t, "the next desired state deployed", func() bool {
		app := e.application("shop")
		return app.Status.DeployedRevision == next && color(e) == "green"
	}, func() string { return describeRevision(e.revision(next)) })

	if a := e.revision(good).Status.Approval; a != nil {
		t.Errorf("Revision %s status.approval %+v, want none: the request named another desired state", good, a)
	}
	app = e.application("shop")
	if app.Status.HeldRevision != "" {
		t.Errorf("heldRevision %q, want none", app.Status.HeldRevision)
	}
	for _, h := range app.Status.History {
		if h.Rollback {
			t.Errorf("history holds a rollback to %s by %v, want none", h.Revision, h.Approval)
		}
	}
}
