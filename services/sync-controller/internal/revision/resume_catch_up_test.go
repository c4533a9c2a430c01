package revision

import (
	"net/http"
	"sync"
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// The Revision's status is the rollout's only write-ahead record: a
// controller that stops in the middle of a pass has recorded the attempt
// there but not in the Application. The next controller resumes that
// attempt (same attempt number, so hooks are not run again) and brings the
// Application's history up to it.
func TestResume_AnAttemptOnlyTheRevisionRecordsIsResumedNotStartedAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	stopFirst := e.startController(defaultOptions())
	e.createApplication("shop", nil)
	slow := e.publish("shop", object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: slow}\n"))
	e.waitForPhase(slow, syncv1.PhaseHealthy)
	stopFirst()

	hung := make(chan struct{})
	_, stopSecond := e.startReconcilerWith(cp.Config, defaultOptions(), hangingApplies("configmaps", hung))
	fast := e.publish("shop", object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: fast}\n"))
	<-hung
	rev := e.revision(fast)
	if rev.Status.Attempt != 1 || rev.Status.StartedAt == nil || len(rev.Status.Waves) != 1 || rev.Status.Waves[0].State != syncv1.WaveApplying {
		t.Fatalf("Revision %s records %s, want attempt 1 started, wave 0 Applying", fast, describeRevision(rev))
	}
	for _, h := range e.application("shop").Status.History {
		if h.Revision == fast {
			t.Fatalf("the Application's history shows attempt %d at %s while its first pass is still applying: "+
				"the Application's status was written as a write-ahead point", h.Attempt, fast)
		}
	}
	stopSecond()

	e.startController(defaultOptions())
	rev = e.waitForPhase(fast, syncv1.PhaseHealthy)
	if rev.Status.Attempt != 1 {
		t.Errorf("Revision %s ended at attempt %d, want the recorded attempt 1 resumed", fast, rev.Status.Attempt)
	}
	app := e.application("shop")
	if h := app.Status.History; len(h) != 2 || h[0].Revision != fast || h[0].Attempt != 1 ||
		h[0].Result != syncv1.PhaseHealthy || h[0].StartedAt == nil || !h[0].StartedAt.Equal(rev.Status.StartedAt) {
		t.Errorf("history = %+v, want attempt 1 at %s, Healthy, started when the Revision records, then %s", h, fast, slow)
	}
	if app.Status.DeployedRevision != fast {
		t.Errorf("deployedRevision = %q, want %s", app.Status.DeployedRevision, fast)
	}
}

// hangingApplies makes the Reconciler's service-account clients hold every
// apply of resource that is not a dry-run until the controller stops, as a
// process stopped in the middle of its apply would leave it, and closes
// hung at the first one.
func hangingApplies(resource string, hung chan struct{}) func(*Reconciler) {
	var once sync.Once
	return answeringApplies(resource, func(req *http.Request) (*http.Response, error) {
		once.Do(func() { close(hung) })
		<-req.Context().Done()
		return nil, req.Context().Err()
	})
}
