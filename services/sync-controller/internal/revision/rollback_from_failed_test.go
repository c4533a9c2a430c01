package revision

import (
	"testing"
	"time"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestRollback_FromAFailedDesiredRevisionHoldsIt is the steps: v1
// and v2 Healthy, v3 fails its pre-sync hook, a rollback to v1 is
// requested. The Revision rolled back from is v3, the desired one: it is
// held, so it neither releases the hold nor runs again, until a newer
// desired state arrives.
func TestRollback_FromAFailedDesiredRevisionHoldsIt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startController(defaultOptions())
	e.createApplication("shop", nil)
	v1 := e.publish("shop", settings(t, "blue"))
	e.waitForPhase(v1, syncv1.PhaseHealthy)
	v2 := e.publish("shop", settings(t, "red"))
	e.waitForPhase(v2, syncv1.PhaseHealthy)
	v3 := e.publish("shop", settings(t, "black"), object(t, failingJob))
	e.waitForPhase(v3, syncv1.PhaseFailed)

	e.requestRollback("shop", v1, "carol")
	eventually(t, "the rollback to v1 deployed", func() bool {
		app := e.application("shop")
		return app.Status.DeployedRevision == v1 && color(e) == "blue"
	}, func() string { return describeRevision(e.revision(v1)) })
	attempts := e.revision(v3).Status.Attempt
	time.Sleep(3 * time.Second)
	app := e.application("shop")
	if app.Status.HeldRevision != v3 || app.Status.DeployedRevision != v1 || color(e) != "blue" {
		t.Fatalf("held %q, deployed %q, color %q; want %s held, %s deployed, blue", app.Status.HeldRevision, app.Status.DeployedRevision, color(e), v3, v1)
	}
	if n := e.revision(v3).Status.Attempt; n != attempts {
		t.Fatalf("the held Revision %s was tried again: attempt %d, was %d", v3, n, attempts)
	}
	for _, ev := range e.events("shop", syncv1.ReasonProgressing) {
		if contains(ev.Note, "is no longer held") {
			t.Fatalf("the hold was released without a newer desired state: %s", ev.Note)
		}
	}

	next := e.publish("shop", settings(t, "green"))
	eventually(t, "a newer desired state releases the hold", func() bool {
		app := e.application("shop")
		return app.Status.DeployedRevision == next && app.Status.HeldRevision == "" && color(e) == "green"
	}, nil)
}
