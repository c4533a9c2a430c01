package revision

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestApproval_ConditionsFollowTheApproval: while a Revision waits, its
// AwaitingApproval condition prints the command that approves it; once an
// approved rollout has finished, neither the Revision nor the Application still says it waits
// for approval, and the Revision's Approved condition names who approved
// which plan.
func TestApproval_ConditionsFollowTheApproval(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startController(defaultOptions())
	e.createApplication("shop", func(app *syncv1.Application) { app.Spec.Sync.Automatic = false })
	name := e.publish("shop", configMap(t, "settings"))
	rev := e.waitForPhase(name, syncv1.PhaseAwaitingApproval)
	digest := rev.Status.Plan.Digest
	// The command it prints approves this Revision, not whichever is
	// current when it is run.
	command := "ksync approve shop -n " + e.ns + " --revision " + name
	if c := meta.FindStatusCondition(rev.Status.Conditions, syncv1.ConditionAwaitingApproval); c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, command) {
		t.Fatalf("AwaitingApproval = %+v, want True printing %q", c, command)
	}
	if c := meta.FindStatusCondition(rev.Status.Conditions, syncv1.ConditionApproved); c != nil && c.Status == metav1.ConditionTrue {
		t.Fatalf("Approved is True before any approval: %+v", c)
	}

	e.approve("shop", name, "alice", digest)
	rev = e.waitForPhase(name, syncv1.PhaseHealthy)
	checks := []struct {
		what   string
		conds  []metav1.Condition
		typ    string
		status metav1.ConditionStatus
		parts  []string
	}{
		{"Revision Approved", rev.Status.Conditions, syncv1.ConditionApproved, metav1.ConditionTrue, []string{"alice", digest}},
		{"Revision AwaitingApproval", rev.Status.Conditions, syncv1.ConditionAwaitingApproval, metav1.ConditionFalse, []string{"approved by alice"}},
		{"Application AwaitingApproval", e.application("shop").Status.Conditions, syncv1.ConditionAwaitingApproval, metav1.ConditionFalse, nil},
	}
	for _, c := range checks {
		got := meta.FindStatusCondition(c.conds, c.typ)
		if got == nil || got.Status != c.status {
			t.Errorf("%s = %+v, want %s", c.what, got, c.status)
			continue
		}
		for _, p := range c.parts {
			if !strings.Contains(got.Message, p) {
				t.Errorf("%s message %q does not name %q", c.what, got.Message, p)
			}
		}
	}
}
