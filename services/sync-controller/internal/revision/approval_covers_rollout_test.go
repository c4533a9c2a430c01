package revision

import (
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestApproval_OneApprovalCoversEveryHookAndWaveOfTheRollout: a manual
// Application's rollout with a pre-sync hook, three waves and a post-sync
// hook runs to the end on the one approval it started with; nothing in it
// asks again.
func TestApproval_OneApprovalCoversEveryHookAndWaveOfTheRollout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startController(defaultOptions())
	e.createApplication("shop", func(app *syncv1.Application) { app.Spec.Sync.Automatic = false })
	wave := func(name, w string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  annotations: {sync.kuvryn.io/sync-wave: \"" + w + "\"}\ndata: {k: v}\n"
	}
	name := e.publish("shop", object(t, migrateJob), object(t, wave("first", "0")), object(t, wave("second", "1")),
		object(t, wave("third", "2")), object(t, smokeJob))
	digest := e.waitForPhase(name, syncv1.PhaseAwaitingApproval).Status.Plan.Digest

	e.approve("shop", name, "alice", digest)
	rev := e.waitForPhase(name, syncv1.PhaseHealthy)
	if len(rev.Status.Waves) != 3 || hookState(rev, "migrate").State != syncv1.HookSucceeded || hookState(rev, "smoke").State != syncv1.HookSucceeded {
		t.Fatalf("waves %+v, hooks %+v: want three waves and both hooks done", rev.Status.Waves, rev.Status.Hooks)
	}
	if a := rev.Status.Approval; a == nil || a.By != "alice" || a.Digest != digest || rev.Status.Attempt != 1 {
		t.Errorf("attempt %d under %+v, want attempt 1 under alice's approval of %s", rev.Status.Attempt, a, digest)
	}
	if n := len(e.events("shop", syncv1.ReasonAwaitingApproval)); n != 1 {
		t.Errorf("%d AwaitingApproval Events, want the one before the approval", n)
	}
	if c := condition(rev.Status.Conditions, syncv1.ConditionAwaitingApproval); c.Status != "False" {
		t.Errorf("AwaitingApproval = %+v, want False once approved", c)
	}
}
