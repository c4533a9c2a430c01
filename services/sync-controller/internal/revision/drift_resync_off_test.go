package revision

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestDrift_ResyncIntervalZeroLeavesUnwatchedKindsUnchecked: with
// --drift-resync-interval=0, a kind the controller may not watch is never
// re-planned, so a deleted object of it stays deleted (the documented cost
// of turning the resync off).
func TestDrift_ResyncIntervalZeroLeavesUnwatchedKindsUnchecked(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o := defaultOptions()
	o.DriftResyncInterval = 0
	e.startControllerAs(e.restrictedController(), o)
	e.createApplication("shop", nil)
	name := e.publish("shop", configMap(t, "settings"))
	e.waitForPhase(name, syncv1.PhaseHealthy)

	must(t, admin.Delete(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "settings"}}))
	// With the 2s resync of TestDrift_KindTheControllerMayNotWatchIsCheckedEveryResync
	// the object is back well within this wait.
	time.Sleep(6 * time.Second)
	if e.get("v1", "ConfigMap", "settings") != nil {
		t.Error("the deleted ConfigMap was applied again with the resync turned off")
	}
	if rev := e.revision(name); rev.Status.Attempt != 1 {
		t.Errorf("Revision attempt %d, want 1: nothing re-planned it", rev.Status.Attempt)
	}
}
