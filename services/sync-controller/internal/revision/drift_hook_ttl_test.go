package revision

import (
	"testing"
	"time"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestDrift_HookDeletedByItsTTLIsNotDrift: a pre-sync hook Job that its
// ttlSecondsAfterFinished deletes after the rollout is not missing desired
// state: the Application stays Synced and nothing runs it again.
func TestDrift_HookDeletedByItsTTLIsNotDrift(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rec := watchKinds(t, e.ns, jobGVK)
	e.startController(driftOptions())
	e.createApplication("shop", nil)
	name := e.publish("shop", object(t, shortLivedMigrateJob), configMap(t, "settings"))
	e.waitForPhase(name, syncv1.PhaseHealthy)
	eventually(t, "the TTL controller deleting the finished hook Job", func() bool {
		return e.get("batch/v1", "Job", "migrate") == nil
	}, nil)

	// Several drift checks (every 2s) pass.
	time.Sleep(6 * time.Second)
	app := e.application("shop")
	if app.Status.Sync != syncv1.SyncStateSynced {
		t.Errorf("Application sync %s, want Synced: a hook that ran is not desired state", app.Status.Sync)
	}
	if rev := e.revision(name); rev.Status.Attempt != 1 || rev.Status.Phase != syncv1.PhaseHealthy {
		t.Errorf("Revision attempt %d phase %s, want attempt 1 Healthy", rev.Status.Attempt, rev.Status.Phase)
	}
	if n := rec.creations("Job", "migrate"); n != 1 {
		t.Errorf("hook Job migrate created %d times, want once", n)
	}
}
