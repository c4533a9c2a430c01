package revision

import (
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestApproval_HandEditBesideAnotherManagersFieldStaysAnApplyConflict: a
// manual Application plans a hand edit's take-over with a forced dry-run
// only when that takes fields from hand-edit managers alone. When another
// controller also holds a field the desired state sets, the plan is the
// ApplyConflict naming it, as without the hand edit, and nothing is written
// to the object.
func TestApproval_HandEditBesideAnotherManagersFieldStaysAnApplyConflict(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	name, _ := e.rolledOutManuallyThenStopped(object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  key: value\n  color: blue\n"))
	for _, w := range []struct{ manager, patch string }{
		{"kubectl-edit", `{"data":{"key":"red"}}`},
		{"test-operator", `{"data":{"color":"green"}}`},
	} {
		must(t, admin.Patch(t.Context(), e.get("v1", "ConfigMap", "web"), client.RawPatch(types.MergePatchType, []byte(w.patch)), client.FieldOwner(w.manager)))
	}
	before := e.get("v1", "ConfigMap", "web")
	e.startController(driftOptions())

	eventually(t, "the Application Ready=False ApplyConflict naming the other controller's field", func() bool {
		c := condition(e.application("shop").Status.Conditions, syncv1.ConditionReady)
		return c.Status == "False" && c.Reason == syncv1.ReasonApplyConflict &&
			contains(c.Message, "ConfigMap "+e.ns+"/web", `field manager "test-operator" owns .data.color`)
	}, func() string { return describeRevision(e.revision(name)) })
	// Drift checks run every 2s; none may write to the object.
	time.Sleep(5 * time.Second)
	after := e.get("v1", "ConfigMap", "web")
	if after.GetResourceVersion() != before.GetResourceVersion() || !reflect.DeepEqual(after.GetManagedFields(), before.GetManagedFields()) {
		t.Fatalf("the object was written: resourceVersion %s, then %s; managedFields\n%v\nthen\n%v",
			before.GetResourceVersion(), after.GetResourceVersion(), managers(before), managers(after))
	}
	if rev := e.revision(name); rev.Status.Attempt != 1 || rev.Status.Phase != syncv1.PhaseHealthy {
		t.Errorf("attempt %d phase %s, want attempt 1 still Healthy: a conflict is shown, not planned for approval", rev.Status.Attempt, rev.Status.Phase)
	}
}
