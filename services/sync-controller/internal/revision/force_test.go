package revision

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestForce_PlanShowsTheForceAndApplyTakesAnotherManagersField: an object
// annotated sync.kuvryn.io/force "true", or any object of an Application
// with spec.sync.force, is planned as a forced update, which the approver
// sees, and applying it takes the field back from the controller that owned
// it.
func TestForce_PlanShowsTheForceAndApplyTakesAnotherManagersField(t *testing.T) {
	tests := []struct {
		name       string
		annotation bool
		appForce   bool
	}{
		{name: "annotation on the object", annotation: true},
		{name: "spec.sync.force on the Application", appForce: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			ctx := t.Context()
			other := object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  key: operator\n")
			other.SetNamespace(e.ns)
			must(t, admin.Apply(ctx, client.ApplyConfigurationFromUnstructured(other), client.FieldOwner("test-operator")))

			e.startController(defaultOptions())
			e.createApplication("shop", func(app *syncv1.Application) {
				app.Spec.Sync.Automatic = false
				app.Spec.Sync.Force = tt.appForce
			})
			desired := configMap(t, "settings")
			if tt.annotation {
				desired.SetAnnotations(map[string]string{syncv1.ForceAnnotation: "true"})
			}
			name := e.publish("shop", desired)

			rev := e.waitForPhase(name, syncv1.PhaseAwaitingApproval)
			if p := rev.Status.Plan; p == nil || len(p.Entries) != 1 || !p.Entries[0].Force || p.Entries[0].Action != syncv1.ActionUpdate ||
				!contains(p.Entries[0].Diff, "operator", "value") {
				t.Fatalf("plan = %+v, want one forced update of the ConfigMap from operator to value", p)
			}
			e.approve("shop", name, "alice", rev.Status.Plan.Digest)
			e.waitForPhase(name, syncv1.PhaseHealthy)

			live := &corev1.ConfigMap{}
			must(t, admin.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "settings"}, live))
			if live.Data["key"] != "value" {
				t.Errorf("ConfigMap data.key = %q, want the forced value from Git", live.Data["key"])
			}
			for _, f := range live.ManagedFields {
				if f.Manager == "test-operator" && f.FieldsV1 != nil && contains(f.FieldsV1.GetRawString(), `"f:key"`) {
					t.Errorf("test-operator still owns data.key: %s", f.FieldsV1.GetRawString())
				}
			}
		})
	}
}

func TestForce_AnnotationOtherThanTrueOrFalseFailsThePlan(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startController(defaultOptions())
	e.createApplication("shop", nil)
	bad := configMap(t, "settings")
	bad.SetAnnotations(map[string]string{syncv1.ForceAnnotation: "yes"})
	name := e.publish("shop", bad)

	rev := e.waitForPhase(name, syncv1.PhaseFailed)
	c := condition(rev.Status.Conditions, syncv1.ConditionPlanned)
	if c.Reason != syncv1.ReasonValidationFailure || !contains(c.Message, "ConfigMap "+e.ns+"/settings", syncv1.ForceAnnotation, `"yes"`) {
		t.Errorf("Planned = %+v, want ValidationFailure naming the object, the annotation and the value", c)
	}
	if e.get("v1", "ConfigMap", "settings") != nil {
		t.Error("a plan that failed validation applied the ConfigMap")
	}
}
