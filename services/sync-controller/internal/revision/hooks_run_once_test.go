package revision

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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
			len(rev.Status.Waves) == 1 && rev.Status.Waves[0].State == syncv1.WaveApplying
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

func TestHooks_NextRevisionDeletesTheKeptHookObjectAndRunsItAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startController(defaultOptions())
	e.createApplication("shop", nil)
	first := e.publish("shop", object(t, migrateJob), configMap(t, "one"))
	firstUID := hookState(e.waitForPhase(first, syncv1.PhaseHealthy), "migrate").UID

	// The finished hook is kept, for its logs, and no longer held by a finalizer.
	kept := e.get("batch/v1", "Job", "migrate")
	if kept == nil || string(kept.GetUID()) != firstUID {
		t.Fatalf("hook Job migrate after the rollout = %v, want the one that ran (UID %s) kept", kept, firstUID)
	}
	if len(kept.GetFinalizers()) != 0 {
		t.Errorf("finished hook Job keeps finalizers %v", kept.GetFinalizers())
	}

	second := e.publish("shop", object(t, migrateJob), configMap(t, "two"))
	secondUID := hookState(e.waitForPhase(second, syncv1.PhaseHealthy), "migrate").UID
	if secondUID == "" || secondUID == firstUID {
		t.Errorf("hook UID in the second Revision = %q, want a new run, not %s", secondUID, firstUID)
	}
	if live := e.get("batch/v1", "Job", "migrate"); live == nil || string(live.GetUID()) != secondUID {
		t.Errorf("hook Job migrate = %v, want the second run (UID %s)", live, secondUID)
	}
}

func TestHooks_HookDeletedWhileRunningFailsTheRevision(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startController(defaultOptions())
	e.createApplication("shop", nil)
	// The hook's Pods cannot schedule, so it runs until it is deleted.
	stuck := object(t, migrateJob)
	must(t, unstructured.SetNestedStringMap(stuck.Object, map[string]string{"sync.kuvryn.io/test-no-such-node": "true"},
		"spec", "template", "spec", "nodeSelector"))
	name := e.publish("shop", stuck, configMap(t, "later"))
	e.waitForRevision(name, "hook migrate Running", func(rev *syncv1.Revision) bool {
		return hookState(rev, "migrate").State == syncv1.HookRunning
	})

	job := e.get("batch/v1", "Job", "migrate")
	must(t, admin.Delete(t.Context(), job))

	rev := e.waitForPhase(name, syncv1.PhaseFailed)
	if c := condition(rev.Status.Conditions, syncv1.ConditionRolloutComplete); c.Reason != syncv1.ReasonHookFailed ||
		!contains(c.Message, "migrate", "deleted while running") {
		t.Errorf("RolloutComplete = %+v, want HookFailed: migrate deleted while running", c)
	}
	eventually(t, "the deleted hook Job gone, its finalizer released", func() bool {
		return e.get("batch/v1", "Job", "migrate") == nil
	}, nil)
	if e.get("v1", "ConfigMap", "later") != nil {
		t.Error("the wave after the deleted hook was applied")
	}
}
