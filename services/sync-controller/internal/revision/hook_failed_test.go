package revision

import (
	"testing"
	"time"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// failingJob cannot schedule, so its active deadline fails it.
const failingJob = `
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
spec:
  activeDeadlineSeconds: 2
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      nodeSelector:
        sync.kuvryn.io/test-no-such-node: "true"
      containers:
      - name: migrate
        image: migrate:1
`

const laterConfigMap = `
apiVersion: v1
kind: ConfigMap
metadata:
  name: later
data:
  applied: "yes"
`

func TestHooks_FailedPreSyncHookFailsRevisionAndStopsLaterWaves(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startController(defaultOptions())
	e.createApplication("shop", nil)
	name := e.publish("shop", object(t, failingJob), object(t, laterConfigMap), object(t, smokeJob))

	rev := e.waitForPhase(name, syncv1.PhaseFailed)
	c := condition(rev.Status.Conditions, syncv1.ConditionRolloutComplete)
	if c.Status != "False" || c.Reason != syncv1.ReasonHookFailed || !contains(c.Message, "pre-sync hook", "Job.batch", "migrate", "DeadlineExceeded") {
		t.Errorf("RolloutComplete = %+v, want False, HookFailed, naming pre-sync hook Job migrate and why", c)
	}
	if h := hookState(rev, "migrate"); h.State != syncv1.HookFailed {
		t.Errorf("hook migrate = %+v, want Failed", h)
	}
	if h := hookState(rev, "smoke"); h.State != syncv1.HookPending {
		t.Errorf("post-sync hook smoke = %+v, want Pending: later groups must not run", h)
	}
	for _, w := range rev.Status.Waves {
		if w.State != syncv1.WavePending {
			t.Errorf("wave %d = %s, want Pending", w.Wave, w.State)
		}
	}

	// The Revision's status is written before the Application's.
	var app *syncv1.Application
	eventually(t, "the Application to record the failed attempt", func() bool {
		app = e.application("shop")
		return len(app.Status.History) > 0 && app.Status.History[0].Result != syncv1.PhaseApplying
	}, nil)
	if c := condition(app.Status.Conditions, syncv1.ConditionReady); c.Status != "False" || c.Reason != syncv1.ReasonHookFailed {
		t.Errorf("Application Ready = %+v, want False with reason HookFailed", c)
	}
	if app.Status.Sync != syncv1.SyncStateOutOfSync || app.Status.DeployedRevision != "" {
		t.Errorf("Application sync %q deployed %q, want OutOfSync and nothing deployed", app.Status.Sync, app.Status.DeployedRevision)
	}
	if len(app.Status.History) != 1 || app.Status.History[0].Result != syncv1.PhaseFailed ||
		app.Status.History[0].Reason != syncv1.ReasonHookFailed {
		t.Errorf("history = %+v, want one Failed attempt with reason HookFailed", app.Status.History)
	}
	eventually(t, "a HookFailed Warning Event", func() bool {
		evs := e.events("shop", syncv1.ReasonHookFailed)
		return len(evs) == 1 && evs[0].Type == "Warning" && contains(evs[0].Note, "migrate")
	}, nil)

	// Later waves and post-sync hooks stay unapplied, also on later reconciles.
	time.Sleep(3 * pollInterval)
	if e.get("v1", "ConfigMap", "later") != nil {
		t.Error("ConfigMap later of a wave after the failed hook was applied")
	}
	if e.get("batch/v1", "Job", "smoke") != nil {
		t.Error("post-sync hook smoke ran after the pre-sync hook failed")
	}
}
