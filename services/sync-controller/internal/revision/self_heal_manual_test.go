package revision

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestSelfHeal_ManualApplicationPlansTheCorrectionOfAHandEditForApproval: a
// hand edit on a manual Application is shown as a fresh plan of its
// correction, waiting for approval with an ApprovalStale Event; nothing is
// reverted until that plan is approved, and the re-rollout is recorded as
// a fresh approval.
func TestSelfHeal_ManualApplicationPlansTheCorrectionOfAHandEditForApproval(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startController(driftOptions())
	e.createApplication("shop", func(app *syncv1.Application) { app.Spec.Sync.Automatic = false })
	name := e.publish("shop", configMap(t, "settings"))
	first := e.waitForPhase(name, syncv1.PhaseAwaitingApproval).Status.Plan.Digest
	e.approve("shop", name, "alice", first)
	e.waitForPhase(name, syncv1.PhaseHealthy)

	key := client.ObjectKey{Namespace: e.ns, Name: "settings"}
	cm := &corev1.ConfigMap{}
	must(t, admin.Get(t.Context(), key, cm))
	base := cm.DeepCopy()
	cm.Data["key"] = "red"
	cm.Labels = map[string]string{"tier": "db"}
	must(t, admin.Patch(t.Context(), cm, client.MergeFrom(base), client.FieldOwner("kubectl-patch")))

	rev := e.waitForPhase(name, syncv1.PhaseAwaitingApproval)
	p := rev.Status.Plan
	if p.Digest == first || p.Summary.Update != 1 || len(p.Entries) != 1 || p.Entries[0].Action != syncv1.ActionUpdate ||
		!contains(p.Entries[0].Diff, "red", "value", "tier") {
		t.Fatalf("plan %+v, want a new digest with one update taking data.key from red to value and dropping the label", p)
	}
	if !contains(rev.Status.Drift, "ConfigMap "+e.ns+"/settings", `"kubectl-patch"`) {
		t.Errorf("status.drift %q, want it to name the object and the hand edit's manager", rev.Status.Drift)
	}
	if c := condition(rev.Status.Conditions, syncv1.ConditionAwaitingApproval); c.Status != "True" || !contains(c.Message, p.Digest) {
		t.Errorf("AwaitingApproval = %+v, want True naming the correction's plan %s", c, p.Digest)
	}
	eventually(t, "an ApprovalStale Event naming the drift, alice's rollout and the correction", func() bool {
		for _, ev := range e.events("shop", syncv1.ReasonApprovalStale) {
			if contains(ev.Note, "ConfigMap "+e.ns+"/settings", "alice", first, p.Digest, "ksync approve shop -n "+e.ns+" --revision "+rev.Name) {
				return true
			}
		}
		return false
	}, nil)
	app := e.application("shop")
	if app.Status.Sync != syncv1.SyncStateOutOfSync {
		t.Errorf("Application sync %s, want OutOfSync", app.Status.Sync)
	}
	// Drift checks run every 2s; none may correct without an approval.
	time.Sleep(5 * time.Second)
	must(t, admin.Get(t.Context(), key, cm))
	if cm.Data["key"] != "red" {
		t.Fatalf("data.key = %q before the correction was approved, want the hand-set red", cm.Data["key"])
	}

	e.approve("shop", name, "bob", p.Digest)
	eventually(t, "the correction rolled out", func() bool {
		must(t, admin.Get(t.Context(), key, cm))
		_, labelled := cm.Labels["tier"]
		return cm.Data["key"] == "value" && !labelled && e.revision(name).Status.Phase == syncv1.PhaseHealthy
	}, func() string { return describeRevision(e.revision(name)) })
	rev = e.revision(name)
	if a := rev.Status.Approval; a == nil || a.By != "bob" || a.Digest != p.Digest || rev.Status.Attempt != 2 {
		t.Errorf("attempt %d, approval %+v; want attempt 2 under bob's approval of %s", rev.Status.Attempt, a, p.Digest)
	}
	app = e.application("shop")
	if h := app.Status.History; len(h) < 2 || h[0].Approval == nil || h[0].Approval.By != "bob" || h[1].Approval == nil || h[1].Approval.By != "alice" ||
		!contains(h[0].Drift, "ConfigMap "+e.ns+"/settings", `"kubectl-patch"`) || h[1].Drift != "" {
		t.Errorf("history %+v, want bob's approval of the correction, recording the drift, over alice's of the first rollout", h)
	}
	eventually(t, "the Application Synced again", func() bool {
		return e.application("shop").Status.Sync == syncv1.SyncStateSynced
	}, nil)
}
