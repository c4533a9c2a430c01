package scenarios_test

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/e2e/harness"
)

// TestE2E_Chaos_APIServerRestartMidRolloutCompletes kills kube-apiserver
// (SIGKILL) at a point of a hooked three-wave rollout and starts it again
// on the same address, certificates and etcd. Each rollout completes, no
// hook Job is created twice (counted from a watch resumed across the
// restart), and no service exits. CI runs one rollout; make e2e-chaos runs
// KUVRYN_CHAOS_ROLLOUTS, the kill point moving from the pre-sync hook to
// the second wave to the post-sync hook.
func TestE2E_Chaos_APIServerRestartMidRolloutCompletes(t *testing.T) {
	rollouts := chaosRollouts(t)
	clientset, err := kubernetes.NewForConfig(env.CP.Config)
	if err != nil {
		t.Fatal(err)
	}
	points := []struct {
		name string
		obj  client.Object
	}{
		{"migrate", &batchv1.Job{}},
		{"web-1", &appsv1.Deployment{}},
		{"smoke", &batchv1.Job{}},
	}
	var downs, recoveries []time.Duration
	for i := range rollouts {
		point := points[i%len(points)]
		ns := namespace(t, fmt.Sprintf("e2e-chaos-apiserver-%d", i))
		jobs := watchJobCreations(t, clientset, ns)
		repository(t, ns, "platform", chaosRepository())
		eventually(t, 3*time.Minute, point.name+" created by the rollout", func() bool {
			return env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: point.name}, point.obj) == nil
		})
		midRollout := !deployed(t, ns, "shop")

		killed := time.Now()
		if err := env.CP.KillAPIServer(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := env.CP.StartAPIServer(t.Context()); err != nil {
			t.Fatal(err)
		}
		back := time.Now()
		waitHealthy(t, ns, "shop", "")
		downs, recoveries = append(downs, back.Sub(killed)), append(recoveries, time.Since(back))
		t.Logf("rollout %d: API server killed once %s existed (mid-rollout %t), down %s, rollout complete %s after it was back",
			i, point.name, midRollout, back.Sub(killed).Round(100*time.Millisecond), time.Since(back).Round(100*time.Millisecond))

		rev := get(t, &syncv1.Revision{}, ns, get(t, &syncv1.Application{}, ns, "shop").Status.DeployedRevision)
		for _, hook := range []string{"migrate", "smoke"} {
			if got := hookState(rev, hook); got != syncv1.HookSucceeded {
				t.Errorf("rollout %d: hook %s is %q, want Succeeded", i, hook, got)
			}
		}
		requireOnlyPlanned(t, ns, rev)
		for name, n := range jobs.created() {
			if n > 1 {
				t.Errorf("rollout %d: hook Job %s created %d times", i, name, n)
			}
		}
		requireServicesRunning(t)
	}
	t.Logf("API server restarts: %d, all rollouts completed; down %s, rollout complete after it was back %s",
		rollouts, spread(downs), spread(recoveries))
}

// requireServicesRunning fails unless every service the suite started, or
// restarted, still runs: none gave up (such as on a lost leader Lease).
func requireServicesRunning(t *testing.T) {
	t.Helper()
	if err := env.Exited(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*harness.Process{syncController, sourceController, services.Image, services.Notify, services.Web} {
		if p.Exited() {
			t.Fatalf("%s is not running; see %s", p.Name, p.LogPath)
		}
	}
}

// spread is "min … max" of figures, or the one figure.
func spread(ds []time.Duration) string {
	lo, hi := ds[0], ds[0]
	for _, d := range ds {
		lo, hi = min(lo, d), max(hi, d)
	}
	if lo == hi {
		return lo.Round(100 * time.Millisecond).String()
	}
	return lo.Round(100*time.Millisecond).String() + " … " + hi.Round(100*time.Millisecond).String()
}
