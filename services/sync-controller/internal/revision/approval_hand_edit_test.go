package revision

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestApproval_HandEditBetweenPlanAndApprovalIsAFreshPlanNotAConflict: a
// `kubectl scale` after a plan was shown and before it was approved makes
// the approval stale and shows the correction in a fresh plan; approving
// that one rolls out without an ApplyConflict.
func TestApproval_HandEditBetweenPlanAndApprovalIsAFreshPlanNotAConflict(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startController(defaultOptions())
	e.createApplication("shop", func(app *syncv1.Application) { app.Spec.Sync.Automatic = false })
	first := e.publish("shop", object(t, webDeployment))
	e.approve("shop", first, "alice", e.waitForPhase(first, syncv1.PhaseAwaitingApproval).Status.Plan.Digest)
	e.waitForPhase(first, syncv1.PhaseHealthy)

	second := e.publish("shop", object(t, strings.Replace(webDeployment, "web:1", "web:2", 1)))
	reviewed := e.waitForPhase(second, syncv1.PhaseAwaitingApproval).Status.Plan.Digest

	dep := &appsv1.Deployment{}
	must(t, admin.Get(t.Context(), client.ObjectKey{Namespace: e.ns, Name: "web"}, dep))
	must(t, admin.SubResource("scale").Patch(t.Context(), dep, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":5}}`)),
		client.FieldOwner("kubectl")))
	e.approve("shop", second, "bob", reviewed)

	rev := e.waitForRevision(second, "the approval found stale, with a fresh plan", func(rev *syncv1.Revision) bool {
		c := condition(rev.Status.Conditions, syncv1.ConditionAwaitingApproval)
		return c.Reason == syncv1.ReasonApprovalStale && rev.Status.Plan != nil && rev.Status.Plan.Digest != reviewed
	})
	if p := rev.Status.Plan; len(p.Entries) != 1 || !contains(p.Entries[0].Diff, "replicas: 5", "replicas: 2", "web:2") {
		t.Fatalf("fresh plan %+v, want one update taking replicas from 5 back to 2 along with the new image", p)
	}
	e.approve("shop", second, "bob", rev.Status.Plan.Digest)
	e.waitForPhase(second, syncv1.PhaseHealthy)
	must(t, admin.Get(t.Context(), client.ObjectKey{Namespace: e.ns, Name: "web"}, dep))
	if *dep.Spec.Replicas != 2 || dep.Spec.Template.Spec.Containers[0].Image != "web:2" {
		t.Errorf("replicas %d image %s, want 2 and web:2", *dep.Spec.Replicas, dep.Spec.Template.Spec.Containers[0].Image)
	}
	for _, h := range e.application("shop").Status.History {
		if h.Reason == syncv1.ReasonApplyConflict {
			t.Errorf("history %+v has an ApplyConflict: the hand edit should have been planned, not hit at rollout", h)
		}
	}
}
