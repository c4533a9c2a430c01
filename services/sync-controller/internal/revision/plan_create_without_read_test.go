package revision

import (
	"context"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// Once ConfigMaps are watched, a ConfigMap the watch has not seen is planned
// from its dry-run alone and then applied: it is never read first.
func TestPlan_ANewObjectOfAWatchedKindIsDryRunWithoutBeingReadFirst(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	requests := e.startLoggingRequests("configmaps", "added")
	e.createApplication("shop", nil)
	first := e.publish("shop", settings(t, "blue"))
	e.waitForPhase(first, syncv1.PhaseHealthy)

	second := e.publish("shop", settings(t, "blue"), configMap(t, "added"))
	e.waitForPhase(second, syncv1.PhaseHealthy)
	if e.get("v1", "ConfigMap", "added") == nil {
		t.Fatal("the new ConfigMap was not applied")
	}
	got := requests.snapshot()
	if want := []string{"PATCH dry-run", "PATCH"}; len(got) < 2 || !slices.Equal(got[:2], want) {
		t.Errorf("first requests for ConfigMap added = %q, want %q: planned by its dry-run, then applied", got, want)
	}
}

// An object that exists although the watch cache has not seen it is read
// and planned in full: here another Application owns it, which only the
// read tells.
func TestPlan_AnObjectTheWatchCacheHasNotSeenIsReadBeforeItIsPlanned(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startReconcilerWith(cp.Config, defaultOptions(), func(r *Reconciler) {
		r.absent = func(context.Context, *unstructured.Unstructured) bool { return true }
	})
	e.createApplication("shop", nil)
	e.createApplication("cart", nil)
	shop := e.publish("shop", settings(t, "blue"))
	e.waitForPhase(shop, syncv1.PhaseHealthy)

	cart := e.publish("cart", settings(t, "red"))
	rev := e.waitForPhase(cart, syncv1.PhaseFailed)
	if c := condition(rev.Status.Conditions, syncv1.ConditionPlanned); c.Reason != syncv1.ReasonApplyConflict ||
		!contains(c.Message, "belongs to Application "+e.ns+"/shop") {
		t.Errorf("Planned = %+v, want ApplyConflict naming the owner", c)
	}
	if got := color(e); got != "blue" {
		t.Errorf("ConfigMap settings color %q, want shop's blue kept", got)
	}
}
