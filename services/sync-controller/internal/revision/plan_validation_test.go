package revision

import (
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/planner"
)

func TestPlan_UnknownHookValueFailsValidationAndAppliesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startController(defaultOptions())
	e.createApplication("shop", nil)
	bad := object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad\n  annotations:\n    sync.kuvryn.io/hook: pre-synk\n")
	name := e.publish("shop", configMap(t, "good"), bad)

	rev := e.waitForPhase(name, syncv1.PhaseFailed)
	c := condition(rev.Status.Conditions, syncv1.ConditionPlanned)
	if c.Status != "False" || c.Reason != syncv1.ReasonValidationFailure || !contains(c.Message, "bad", syncv1.HookAnnotation, "pre-synk") {
		t.Errorf("Planned = %+v, want False, ValidationFailure, naming the object, annotation and value", c)
	}
	app := e.application("shop")
	if c := condition(app.Status.Conditions, syncv1.ConditionReady); c.Status != "False" || c.Reason != syncv1.ReasonValidationFailure {
		t.Errorf("Application Ready = %+v, want False with reason ValidationFailure", c)
	}
	if e.get("v1", "ConfigMap", "good") != nil {
		t.Error("an object of a Revision that failed validation was applied")
	}
}

func TestPlan_UnservedKindWithoutDefinitionFailsValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startController(defaultOptions())
	e.createApplication("shop", nil)
	widget := object(t, "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n")
	name := e.publish("shop", widget)

	rev := e.waitForPhase(name, syncv1.PhaseFailed)
	if c := condition(rev.Status.Conditions, syncv1.ConditionPlanned); c.Reason != syncv1.ReasonValidationFailure ||
		!contains(c.Message, "Widget.example.com", "not served") {
		t.Errorf("Planned = %+v, want ValidationFailure naming the unserved kind", c)
	}
}

// TestPlan_FieldOfTheWrongTypeFailsNamingTheFieldAndAppliesNothing: the API
// server answers a manifest that does not fit the kind's schema with an
// internal error (HTTP 500), which comes again on every retry; the plan
// fails at once, naming the object and the field, instead of retrying.
func TestPlan_FieldOfTheWrongTypeFailsNamingTheFieldAndAppliesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startController(defaultOptions())
	e.createApplication("shop", nil)
	bad := object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad\ndata:\n  size: {large: true}\n")
	name := e.publish("shop", configMap(t, "good"), bad)

	rev := e.waitForPhase(name, syncv1.PhaseFailed)
	c := condition(rev.Status.Conditions, syncv1.ConditionPlanned)
	if c.Status != "False" || c.Reason != syncv1.ReasonValidationFailure || !contains(c.Message, "ConfigMap", "bad", ".data.size", planner.TypedPatchRefusal) {
		t.Errorf("Planned = %+v, want False, ValidationFailure, naming the object and the field .data.size", c)
	}
	if e.get("v1", "ConfigMap", "good") != nil {
		t.Error("an object of a Revision that failed planning was applied")
	}
}
