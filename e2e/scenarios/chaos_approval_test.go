package scenarios_test

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// manualShopApplication is shopApplication waiting for approval.
var manualShopApplication = strings.Replace(shopApplication, "automatic: true", "automatic: false", 1)

// TestE2E_Chaos_KilledServicesLoseNoApprovalAndForgeNone sends SIGKILL to
// the services around an approval of the hooked three-wave Application:
// while its first Revision waits for approval, at seeded random points after
// carol approves it (both services), and while a second commit waits. A
// kill never approves anything (nothing is applied, no hook Job created,
// the old approval does not carry over to the new plan), and never loses an
// approval (the approved plan rolls out without another, recorded as
// carol's approval of that digest, hooks run once, one Revision per commit).
func TestE2E_Chaos_KilledServicesLoseNoApprovalAndForgeNone(t *testing.T) {
	seed, rng := chaosSeed(t)
	clientset, err := kubernetes.NewForConfig(env.CP.Config)
	if err != nil {
		t.Fatal(err)
	}
	ns := namespace(t, "e2e-chaos-approval")
	jobs := watchJobCreations(t, clientset, ns)
	files := chaosRepository()
	files[".ksync.yaml"] = manualShopApplication
	gitRepo := repository(t, ns, "platform", files)
	kills := 0

	first := awaitingApproval(t, ns, "shop", "").Name
	before := jobs.created()
	restartService(t, "sync-controller")
	kills++
	unapplied(t, ns, first, jobs, before, "after a kill while it waited for approval")

	out, errOut, err := ksync(t, userKubeconfig(t, "carol", ns), "approve", "shop", "-n", ns, "--yes")
	if err != nil {
		t.Fatalf("ksync approve: %v\n%s%s", err, out, errOut)
	}
	approved := get(t, &syncv1.Revision{}, ns, first).Status.Plan.Digest
	plan := killPlan(rng, "sync-controller", "source-controller")
	t.Logf("approved %s; %s", approved, plan)
	count := map[string]int{}
	midRollout := plan.run(t, ns, time.Now(), count)
	kills += len(plan)
	if got := waitHealthy(t, ns, "shop", ""); got != first {
		t.Fatalf("deployed %s, want the approved Revision %s", got, first)
	}
	rev := get(t, &syncv1.Revision{}, ns, first)
	if a := rev.Status.Approval; a == nil || a.By != "carol" || a.Digest != approved || rev.Status.Plan.Digest != approved {
		t.Errorf("Revision %s: approval %+v of plan %s, want carol's approval of %s", first, a, rev.Status.Plan.Digest, approved)
	}
	for _, hook := range []string{"migrate", "smoke"} {
		if got := hookState(rev, hook); got != syncv1.HookSucceeded {
			t.Errorf("hook %s is %q, want Succeeded", hook, got)
		}
	}
	requireOnlyPlanned(t, ns, rev)

	if _, err := gitRepo.Commit(map[string]string{"app/web-0.yaml": strings.Replace(files["app/web-0.yaml"], "web:1.0", "web:1.1", 1)}, "web-0 1.1"); err != nil {
		t.Fatal(err)
	}
	second := awaitingApproval(t, ns, "shop", first).Name
	before = jobs.created()
	restartService(t, "sync-controller")
	kills++
	unapplied(t, ns, second, jobs, before, "after a kill while the second commit waited for approval")
	if img := get(t, &appsv1.Deployment{}, ns, "web-0").Spec.Template.Spec.Containers[0].Image; img != "web:1.0" {
		t.Errorf("Deployment web-0 runs %s, want web:1.0 until the second plan is approved", img)
	}
	if app := get(t, &syncv1.Application{}, ns, "shop"); app.Status.DeployedRevision != first {
		t.Errorf("deployed %s, want %s until the second plan is approved", app.Status.DeployedRevision, first)
	}
	requireOnlyPlanned(t, ns, get(t, &syncv1.Revision{}, ns, first))

	var revs syncv1.RevisionList
	if err := env.Client.List(t.Context(), &revs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(revs.Items) != 2 {
		t.Errorf("%d Revisions for 2 commits, want 2", len(revs.Items))
	}
	rerun := 0
	for name, n := range jobs.created() {
		if n > 1 {
			rerun++
			t.Errorf("hook Job %s created %d times", name, n)
		}
	}
	t.Logf("chaos seed %d: %d kills around approvals (%d after approving, before the rollout completed), "+
		"approved plan deployed with 1 approval, second plan held, %d Revisions for 2 commits, %d hook Jobs created twice",
		seed, kills, midRollout, len(revs.Items), rerun)
}

// unapplied checks, after the restarted sync-controller has had time to act,
// that Revision rev still waits for approval, holds none, and started no
// rollout: no hook Job was created since before.
func unapplied(t *testing.T, ns, rev string, jobs *jobCreations, before map[string]int, when string) {
	t.Helper()
	// A forged approval would start the pre-sync hook within a second or
	// two; give the restarted controller several passes to do so.
	time.Sleep(8 * time.Second)
	r := get(t, &syncv1.Revision{}, ns, rev)
	if r.Status.Phase != syncv1.PhaseAwaitingApproval || r.Status.Approval != nil {
		t.Errorf("%s: Revision %s is %s with approval %+v, want AwaitingApproval and none", when, rev, r.Status.Phase, r.Status.Approval)
	}
	if r.Status.Hooks != nil {
		for _, h := range r.Status.Hooks.Items {
			if h.State != "" && h.State != syncv1.HookPending {
				t.Errorf("%s: Revision %s hook %s is %s, want not started", when, rev, h.ObjectRef.Name, h.State)
			}
		}
	}
	for name, n := range jobs.created() {
		if n != before[name] {
			t.Errorf("%s: hook Job %s was created", when, name)
		}
	}
}
