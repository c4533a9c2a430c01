package revision

import (
	"fmt"
	"testing"
	"time"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestRetry_FailedHookRunsAgainOnTheNextAttempt: a pre-sync hook that
// failed is not a hook that ran: the retry creates its Job anew, and once
// it can succeed the rollout completes.
func TestRetry_FailedHookRunsAgainOnTheNextAttempt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rec := watchKinds(t, e.ns, jobGVK)
	o := defaultOptions()
	o.RetryInterval = time.Second
	e.startController(o)
	e.createApplication("shop", nil)
	// Its Pod schedules only on a node with the gate label: until then the
	// deadline fails the Job.
	migrate := object(t, fmt.Sprintf(`
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations: {sync.kuvryn.io/hook: pre-sync}
spec:
  activeDeadlineSeconds: 5
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {%s: open}
      containers: [{name: migrate, image: migrate:1}]
`, e.gateLabel()))
	name := e.publish("shop", migrate, configMap(t, "settings"))
	e.waitForRevision(name, "attempt 1 Failed in its hook", func(rev *syncv1.Revision) bool {
		c := condition(rev.Status.Conditions, syncv1.ConditionRolloutComplete)
		return rev.Status.Attempt == 1 && rev.Status.Phase == syncv1.PhaseFailed && c.Reason == syncv1.ReasonHookFailed
	})

	e.labelNodes()
	rev := e.waitForPhase(name, syncv1.PhaseHealthy)
	if rev.Status.Attempt < 2 || hookState(rev, "migrate").State != syncv1.HookSucceeded {
		t.Errorf("attempt %d, hook %+v: want a later attempt whose hook succeeded", rev.Status.Attempt, hookState(rev, "migrate"))
	}
	if n := rec.creations("Job", "migrate"); n < 2 {
		t.Errorf("hook Job migrate created %d times, want it created again after it failed", n)
	}
}
