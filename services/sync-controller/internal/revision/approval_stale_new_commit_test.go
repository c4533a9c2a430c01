package revision

import (
	"strings"
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// A new commit after an approval whose rollout never started: the approved
// Revision is superseded with an ApprovalStale Event, the new one waits for
// its own approval, and nothing of either is applied.
func TestApproval_NewCommitBeforeTheRolloutStartedMakesTheApprovalStale(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	stop := e.startController(defaultOptions())
	e.createApplication("shop", func(app *syncv1.Application) { app.Spec.Sync.Automatic = false })
	first := e.publish("shop", configMap(t, "settings"))
	reviewed := e.waitForPhase(first, syncv1.PhaseAwaitingApproval).Status.Plan.Digest

	// The approval lands while no controller runs, and a new commit is
	// rendered before any controller acts on it.
	stop()
	e.approve("shop", first, "alice", reviewed)
	second := e.publish("shop", configMap(t, "settings"), configMap(t, "extra"))
	e.startController(defaultOptions())

	e.waitForPhase(second, syncv1.PhaseAwaitingApproval)
	eventually(t, "an ApprovalStale Event", func() bool {
		return len(e.events("shop", syncv1.ReasonApprovalStale)) == 1
	}, func() string { return describeRevision(e.revision(first)) })
	note := e.events("shop", syncv1.ReasonApprovalStale)[0].Note
	for _, want := range []string{first, second, "alice", "approve Revision " + second} {
		if !strings.Contains(note, want) {
			t.Errorf("ApprovalStale Event %q does not name %q", note, want)
		}
	}
	if phase := e.revision(first).Status.Phase; phase != syncv1.PhaseSuperseded {
		t.Errorf("approved Revision %s is %s, want Superseded", first, phase)
	}
	if e.revision(second).Status.Approval != nil {
		t.Error("the new Revision took the stale approval")
	}
	if e.get("v1", "ConfigMap", "settings") != nil {
		t.Error("a Revision was applied without a valid approval")
	}
}
