package scenarios_test

import (
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

const rollbackApp = `metadata: {name: web}
spec:
  source: {path: app}
  serviceAccountName: deployer
  sync: {automatic: true}
`

// rollbackWithKsync runs `ksync rollback web` as user dave and returns its
// standard output; ksync returns once the rollout of the target started.
func rollbackWithKsync(t *testing.T, ns string) string {
	t.Helper()
	out, errOut, err := ksync(t, userKubeconfig(t, "dave", ns), "rollback", "web", "-n", ns, "--yes", "--timeout=2m")
	if err != nil {
		t.Fatalf("ksync rollback: %v\n%s%s", err, out, errOut)
	}
	return out
}

// waitRolledBack waits until target is deployed, held is held and the
// cluster runs color.
func waitRolledBack(t *testing.T, ns, target, held, color string) {
	t.Helper()
	eventually(t, 3*time.Minute, "Revision "+target+" deployed with "+held+" held", func() bool {
		var app syncv1.Application
		err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "web"}, &app)
		return err == nil && app.Status.DeployedRevision == target && app.Status.HeldRevision == held && settingsColor(t, ns) == color
	})
}

// TestE2E_KsyncRollbackTwiceToTheSameTargetActsBothTimes: roll back, push a
// new commit (which releases the hold), roll back again to the same
// Revision: the second request is acted on too, not a silent no-op.
func TestE2E_KsyncRollbackTwiceToTheSameTargetActsBothTimes(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-rollback-twice")
	gitRepo := repository(t, ns, "platform", map[string]string{".ksync.yaml": rollbackApp, "app/settings.yaml": settingsYAML("blue")})
	good := waitHealthy(t, ns, "web", "")
	if _, err := gitRepo.Commit(map[string]string{"app/settings.yaml": settingsYAML("red")}, "red"); err != nil {
		t.Fatal(err)
	}
	red := waitHealthy(t, ns, "web", good)

	if out := rollbackWithKsync(t, ns); !strings.Contains(out, "Rollback started: Revision "+good) {
		t.Errorf("first ksync rollback:\n%s\nwant it to report the rollout of %s started", out, good)
	}
	waitRolledBack(t, ns, good, red, "blue")

	if _, err := gitRepo.Commit(map[string]string{"app/settings.yaml": settingsYAML("green")}, "green"); err != nil {
		t.Fatal(err)
	}
	green := waitHealthy(t, ns, "web", good)
	if settingsColor(t, ns) != "green" {
		t.Fatal("the new commit did not roll out after the hold was released")
	}

	if out := rollbackWithKsync(t, ns); !strings.Contains(out, "Rolling back web to Revision "+good) || !strings.Contains(out, "Rollback started") {
		t.Errorf("second ksync rollback:\n%s\nwant it to roll back to %s again and report the rollout started", out, good)
	}
	waitRolledBack(t, ns, good, green, "blue")
}

// TestE2E_KsyncRollbackFromAFailedRevisionHoldsIt: v1 and v2 Healthy, v3
// fails its pre-sync hook; `ksync rollback` deploys v1 and holds v3, the
// Revision rolled back from, which is not retried while held.
func TestE2E_KsyncRollbackFromAFailedRevisionHoldsIt(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-rollback-failed")
	gitRepo := repository(t, ns, "platform", map[string]string{".ksync.yaml": rollbackApp, "app/settings.yaml": settingsYAML("blue")})
	v1 := waitHealthy(t, ns, "web", "")
	if _, err := gitRepo.Commit(map[string]string{"app/settings.yaml": settingsYAML("red")}, "red"); err != nil {
		t.Fatal(err)
	}
	v2 := waitHealthy(t, ns, "web", v1)
	if _, err := gitRepo.Commit(map[string]string{"app/settings.yaml": settingsYAML("green"), "app/migrate.yaml": failingHookJob("sync.kuvryn.io/hook: pre-sync")}, "green with a failing migration"); err != nil {
		t.Fatal(err)
	}
	var v3 string
	eventually(t, 3*time.Minute, "the new Revision Failed", func() bool {
		var app syncv1.Application
		if env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "web"}, &app) != nil || app.Status.DesiredRevision == v2 {
			return false
		}
		v3 = app.Status.DesiredRevision
		rev := &syncv1.Revision{}
		return env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: v3}, rev) == nil && rev.Status.Phase == syncv1.PhaseFailed
	})

	out := rollbackWithKsync(t, ns)
	if !strings.Contains(out, "Rolling back web to Revision "+v1+" (from "+v3+")") {
		t.Errorf("ksync rollback:\n%s\nwant it to roll back to %s from the failed %s", out, v1, v3)
	}
	waitRolledBack(t, ns, v1, v3, "blue")
	attempts := get(t, &syncv1.Revision{}, ns, v3).Status.Attempt

	// Past the sync-controller's 30 s --retry-interval the hold still stands:
	// a held Revision is neither applied nor retried.
	time.Sleep(35 * time.Second)
	app := get(t, &syncv1.Application{}, ns, "web")
	if app.Status.HeldRevision != v3 || app.Status.DeployedRevision != v1 || settingsColor(t, ns) != "blue" {
		t.Fatalf("heldRevision %q, deployed %q, color %q; want %s held, %s deployed, blue", app.Status.HeldRevision, app.Status.DeployedRevision, settingsColor(t, ns), v3, v1)
	}
	if got := get(t, &syncv1.Revision{}, ns, v3).Status.Attempt; got != attempts {
		t.Errorf("the held Revision %s was retried: attempt %d, was %d", v3, got, attempts)
	}
}
