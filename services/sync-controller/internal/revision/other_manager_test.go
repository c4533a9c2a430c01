package revision

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/planner"
)

// TestSelfHeal_AnotherControllersFieldIsLeftAloneAndReported: a field that a
// controller writes under its own field manager (an HPA scaling, an operator
// applying) is not a hand edit: self-heal leaves it to that controller and
// the Application reports ApplyConflict naming the manager, the field and the
// ways out.
func TestSelfHeal_AnotherControllersFieldIsLeftAloneAndReported(t *testing.T) {
	for _, tt := range otherManagerWrites {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.startController(driftOptions())
			e.createApplication("shop", nil)
			name := e.publish("shop", object(t, tt.desired))
			e.waitForPhase(name, syncv1.PhaseHealthy)

			tt.write(t, e.ns)

			owner := tt.object + " " + e.ns + "/web"
			eventually(t, "the Application Ready=False ApplyConflict naming the manager, the field and the ways out", func() bool {
				c := condition(e.application("shop").Status.Conditions, syncv1.ConditionReady)
				return c.Status == "False" && c.Reason == syncv1.ReasonApplyConflict &&
					contains(c.Message, owner, `field manager "`+tt.manager+`" owns `+tt.field, "out of the manifests in Git", "have that manager give them up")
			}, func() string { return describeRevision(e.revision(name)) })
			// Several drift checks (every 2s) pass; none may take the field.
			time.Sleep(6 * time.Second)
			if !tt.kept(t, e.ns) {
				t.Errorf("%s lost the value %s wrote", owner, tt.manager)
			}
			desired := object(t, tt.desired)
			live := e.get(desired.GetAPIVersion(), desired.GetKind(), "web")
			if !planner.HasFieldManager(live, tt.manager) {
				t.Errorf("%s managedFields = %+v, want %s still owning its field", owner, live.GetManagedFields(), tt.manager)
			}
			for _, ev := range e.events("shop", syncv1.ReasonDriftCorrected) {
				if contains(ev.Note, tt.manager) {
					t.Errorf("DriftCorrected Event %q took fields from %s", ev.Note, tt.manager)
				}
			}
		})
	}
}

// otherManagerWrites are fields a controller writes under its own field
// manager, as an HPA scaling or an operator applying would.
var otherManagerWrites = []struct {
	name    string
	desired string
	object  string // how the message names the kind
	manager string
	field   string
	write   func(t *testing.T, ns string)
	kept    func(t *testing.T, ns string) bool
}{
	{
		name: "autoscaler scales a Deployment", desired: webDeployment, object: "Deployment.apps", manager: "test-autoscaler", field: ".spec.replicas",
		write: func(t *testing.T, ns string) {
			dep := &appsv1.Deployment{}
			must(t, admin.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "web"}, dep))
			must(t, admin.SubResource("scale").Patch(t.Context(), dep, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":5}}`)),
				client.FieldOwner("test-autoscaler")))
		},
		kept: func(t *testing.T, ns string) bool {
			dep := &appsv1.Deployment{}
			must(t, admin.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "web"}, dep))
			return dep.Spec.Replicas != nil && *dep.Spec.Replicas == 5
		},
	},
	{
		name: "operator applies a ConfigMap key", desired: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  key: value\n",
		object: "ConfigMap", manager: "test-operator", field: ".data.key",
		write: func(t *testing.T, ns string) {
			cm := object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  key: operator\n")
			cm.SetNamespace(ns)
			must(t, admin.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(cm), client.FieldOwner("test-operator"), client.ForceOwnership))
		},
		kept: func(t *testing.T, ns string) bool {
			cm := &corev1.ConfigMap{}
			must(t, admin.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "web"}, cm))
			return cm.Data["key"] == "operator"
		},
	},
}
