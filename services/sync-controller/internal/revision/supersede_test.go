package revision

import (
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

func TestRollout_NewDesiredRevisionSupersedesOneStillRollingOut(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startController(defaultOptions())
	e.createApplication("shop", nil)
	stuck := e.publish("shop", configMap(t, "one"), e.gatedDeployment("web"))
	e.waitForRevision(stuck, "wave 0 applied and waiting", func(rev *syncv1.Revision) bool {
		return len(rev.Status.Waves) == 1 && rev.Status.Waves[0].State == syncv1.WaveApplying
	})

	next := e.publish("shop", configMap(t, "one"))
	e.waitForPhase(next, syncv1.PhaseHealthy)

	old := e.revision(stuck)
	if old.Status.Phase != syncv1.PhaseSuperseded {
		t.Errorf("Revision %s phase = %s, want Superseded", stuck, old.Status.Phase)
	}
	if c := condition(old.Status.Conditions, syncv1.ConditionRolloutComplete); c.Reason != syncv1.ReasonSuperseded || !contains(c.Message, next) {
		t.Errorf("superseded RolloutComplete = %+v, want reason Superseded naming %s", c, next)
	}
	h := e.application("shop").Status.History
	if len(h) != 2 || h[0].Revision != next || h[0].Result != syncv1.PhaseHealthy ||
		h[1].Revision != stuck || h[1].Result != syncv1.PhaseSuperseded {
		t.Errorf("history = %+v, want %s Healthy after %s Superseded", h, next, stuck)
	}
	// What the superseded attempt applied and the new desired state leaves out is pruned.
	eventually(t, "Deployment web of the superseded attempt pruned", func() bool {
		obj := e.get("apps/v1", "Deployment", "web")
		return obj == nil || obj.GetDeletionTimestamp() != nil
	}, nil)
	eventually(t, "a Superseded Event", func() bool { return len(e.events("shop", syncv1.ReasonSuperseded)) == 1 }, nil)
}
