package revision

import (
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// A controller that stops after recording a wave Applying may not have
// applied it. The next controller applies it instead of only waiting for
// its health: here the live ConfigMap of the previous Revision is Healthy
// already, so only its data tells whether the new Revision was applied.
func TestRollout_AWaveRecordedApplyingByAStoppedControllerIsAppliedByTheNext(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	stopFirst := e.startController(defaultOptions())
	e.createApplication("shop", nil)
	slow := e.publish("shop", object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: slow}\n"))
	e.waitForPhase(slow, syncv1.PhaseHealthy)
	stopFirst()

	refused := &atomic.Int32{}
	_, stopSecond := e.startReconcilerWith(cp.Config, defaultOptions(), refusingApplies("configmaps", refused))
	fast := e.publish("shop", object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: fast}\n"))
	e.waitForRevision(fast, "wave 0 Applying", func(rev *syncv1.Revision) bool {
		return len(rev.Status.Waves) == 1 && rev.Status.Waves[0].State == syncv1.WaveApplying
	})
	eventually(t, "the apply of the ConfigMap refused", func() bool { return refused.Load() > 0 }, nil)
	stopSecond()

	e.startController(defaultOptions())
	e.waitForPhase(fast, syncv1.PhaseHealthy)
	live := e.get("v1", "ConfigMap", "settings")
	if mode, _, _ := unstructured.NestedString(live.Object, "data", "mode"); mode != "fast" {
		t.Errorf("ConfigMap settings has mode %q, want fast: the wave recorded Applying was never applied", mode)
	}
}
