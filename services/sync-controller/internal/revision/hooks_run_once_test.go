package revision

import (
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// shortLivedMigrateJob is deleted by its TTL as soon as it finishes.
const shortLivedMigrateJob = `
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations:
    sync.kuvryn.io/hook: pre-sync
spec:
  ttlSecondsAfterFinished: 0
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: migrate
        image: migrate:1
`

func TestHooks_RunOnceAcrossAControllerRestartMidWave(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rec := watchKinds(t, e.ns, jobGVK, deploymentGVK)
	stopFirst := e.startController(defaultOptions())
	e.createApplication("shop", nil)
	name := e.publish("shop", object(t, shortLivedMigrateJob), e.gatedDeployment("web"), object(t, smokeJob))

	// The first controller runs the pre-sync hook and applies wave 0, whose
	// Deployment cannot become Available while the gate is closed.
	before := e.waitForRevision(name, "pre-sync hook Succeeded and wave 0 Applying", func(rev *syncv1.Revision) bool {
		return hookState(rev, "migrate").State == syncv1.HookSucceeded &&
			len(rev.Status.Waves) == 1 && rev.Status.Waves[0].State == waveApplying
	})
	migrateUID := hookState(before, "migrate").UID
	eventually(t, "the TTL controller deleting the finished hook Job", func() bool {
		return e.get("batch/v1", "Job", "migrate") == nil
	}, nil)
	stopFirst()

	e.startController(defaultOptions())
	e.openGate()
	rev := e.waitForPhase(name, syncv1.PhaseHealthy)

	if got := hookState(rev, "migrate"); got.State != syncv1.HookSucceeded || got.UID != migrateUID {
		t.Errorf("hook migrate after restart = %+v, want Succeeded with the UID %s it had before", got, migrateUID)
	}
	if n := rec.creations("Job", "migrate"); n != 1 {
		t.Errorf("pre-sync hook Job migrate was created %d times, want once\nobserved:\n%s", n, rec)
	}
	if n := rec.creations("Job", "smoke"); n != 1 {
		t.Errorf("post-sync hook Job smoke was created %d times, want once", n)
	}
	if e.get("batch/v1", "Job", "migrate") != nil {
		t.Error("the restarted controller ran the succeeded hook migrate again")
	}
	if rev.Status.Attempt != 1 {
		t.Errorf("attempt = %d, want the restarted controller to continue attempt 1", rev.Status.Attempt)
	}
	if c := condition(rev.Status.Conditions, syncv1.ConditionRolloutComplete); c.Status != "True" {
		t.Errorf("RolloutComplete = %+v, want True", c)
	}
}
