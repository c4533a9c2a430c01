package revision

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// The guide: --drift-resync-interval is also the health re-check of
// unhealthy Applications. The controller here may not watch the kind it
// applies, so nothing but the resync tells it that the object broke, and
// then, while the Application is unhealthy, that it recovered.
func TestHealth_UnhealthyApplicationIsReCheckedEveryResync(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.bindClusterAdmin()
	group := e.ns + ".test.kuvryn.io"
	crd := customResourceDefinition(t, group, "Gadget", "{status: {}}")
	must(t, admin.Create(t.Context(), crd))
	t.Cleanup(func() { _ = admin.Delete(context.Background(), crd) })
	eventually(t, "the Gadget CRD established", func() bool {
		got := crd.DeepCopy()
		if admin.Get(t.Context(), types.NamespacedName{Name: crd.GetName()}, got) != nil {
			return false
		}
		conditions, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conditions {
			if c, ok := c.(map[string]any); ok && c["type"] == "Established" && c["status"] == "True" {
				return true
			}
		}
		return false
	}, nil)

	e.startControllerAs(e.restrictedController(), driftOptions())
	e.createApplication("shop", nil)
	name := e.publish("shop", object(t, fmt.Sprintf("apiVersion: %s/v1\nkind: Gadget\nmetadata:\n  name: gear\nspec:\n  size: 3\n", group)))
	e.waitForPhase(name, syncv1.PhaseHealthy)

	// kstatus calls an object whose Stalled condition is True Failed.
	setStatus := func(conditions []any) {
		t.Helper()
		gear := &unstructured.Unstructured{}
		gear.SetAPIVersion(group + "/v1")
		gear.SetKind("Gadget")
		must(t, admin.Get(t.Context(), types.NamespacedName{Namespace: e.ns, Name: "gear"}, gear))
		patch := client.MergeFrom(gear.DeepCopy())
		must(t, unstructured.SetNestedSlice(gear.Object, conditions, "status", "conditions"))
		must(t, admin.Status().Patch(t.Context(), gear, patch))
	}
	health := func() syncv1.HealthState { return e.application("shop").Status.Health }
	setStatus([]any{map[string]any{"type": "Stalled", "status": "True", "reason": "Jammed", "message": "gear is jammed"}})
	eventually(t, "the Application Degraded", func() bool { return health() == syncv1.HealthDegraded },
		func() string { return string(health()) })

	setStatus([]any{map[string]any{"type": "Stalled", "status": "False", "reason": "Turning", "message": "gear turns"}})
	eventually(t, "the Application Healthy again", func() bool { return health() == syncv1.HealthHealthy },
		func() string { return string(health()) })
}
