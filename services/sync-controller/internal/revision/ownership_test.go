package revision

import (
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestOwnership_AnObjectAnotherApplicationOwnsIsNeitherAppliedNorPruned:
// both Applications apply as the same field manager, so Server-Side Apply
// alone would let the second silently overwrite the first's object. The
// owned-by annotation makes the second fail with ApplyConflict naming the
// owner, and its prune leaves the object alone.
func TestOwnership_AnObjectAnotherApplicationOwnsIsNeitherAppliedNorPruned(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startController(defaultOptions())
	e.createApplication("shop", nil)
	e.createApplication("cart", nil)
	shop := e.publish("shop", settings(t, "blue"))
	e.waitForPhase(shop, syncv1.PhaseHealthy)
	if owner := e.get("v1", "ConfigMap", "settings").GetAnnotations()[syncv1.OwnedByAnnotation]; owner != e.ns+"/shop" {
		t.Fatalf("ConfigMap settings owned-by %q, want %s/shop", owner, e.ns)
	}

	cart := e.publish("cart", settings(t, "red"), configMap(t, "cart"))
	rev := e.waitForPhase(cart, syncv1.PhaseFailed)
	c := condition(rev.Status.Conditions, syncv1.ConditionPlanned)
	if c.Reason != syncv1.ReasonApplyConflict || !contains(c.Message, "ConfigMap "+e.ns+"/settings", "belongs to Application "+e.ns+"/shop") {
		t.Errorf("Planned = %+v, want ApplyConflict naming the ConfigMap and its owner", c)
	}
	if got := color(e); got != "blue" {
		t.Errorf("ConfigMap settings color %q, want shop's blue kept", got)
	}
	if e.get("v1", "ConfigMap", "cart") != nil {
		t.Error("cart's other object was applied although its plan failed")
	}

	// The shop keeps managing its object: a change rolls out as usual.
	next := e.publish("shop", settings(t, "green"))
	e.waitForPhase(next, syncv1.PhaseHealthy)
	if got := color(e); got != "green" {
		t.Errorf("ConfigMap settings color %q, want shop's green", got)
	}
}

func TestOwnership_PruneLeavesAnObjectAnotherApplicationTookOver(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startController(defaultOptions())
	e.createApplication("shop", nil)
	first := e.publish("shop", configMap(t, "shared"), configMap(t, "keep"))
	e.waitForPhase(first, syncv1.PhaseHealthy)

	// Another Application now owns the object, as after a move between them.
	shared := e.get("v1", "ConfigMap", "shared")
	annotations := shared.GetAnnotations()
	annotations[syncv1.OwnedByAnnotation] = e.ns + "/cart"
	shared.SetAnnotations(annotations)
	must(t, admin.Update(t.Context(), shared))

	second := e.publish("shop", configMap(t, "keep"))
	e.waitForPhase(second, syncv1.PhaseHealthy)
	if e.get("v1", "ConfigMap", "shared") == nil {
		t.Error("prune deleted an object another Application owns")
	}
}
