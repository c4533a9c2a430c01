package scenarios_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/e2e/harness"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/controlplane"
)

// Environment of the fault suite: how many rollouts to disturb (three kills
// each: the sync-controller, the source-controller and one other service)
// and the seed of the kill points. CI runs one
// rollout; make e2e-chaos runs ten.
const (
	chaosRolloutsEnv = "KUVRYN_CHAOS_ROLLOUTS"
	chaosSeedEnv     = "KUVRYN_CHAOS_SEED"
	// chaosWindow is how long after a Repository is created a kill may
	// come: about as long as an undisturbed rollout of the test's
	// Application, so most kills land in one.
	chaosWindow = 12 * time.Second
)

// chaosRollouts is KUVRYN_CHAOS_ROLLOUTS, default 1.
func chaosRollouts(t *testing.T) int {
	t.Helper()
	v := os.Getenv(chaosRolloutsEnv)
	if v == "" {
		return 1
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive number of rollouts", chaosRolloutsEnv, v)
	}
	return n
}

// chaosSeed is KUVRYN_CHAOS_SEED, default the clock, logged so that a
// failing run can be repeated, and a generator of kill points from it.
func chaosSeed(t *testing.T) (int64, *rand.Rand) {
	t.Helper()
	seed := time.Now().UnixNano()
	if v := os.Getenv(chaosSeedEnv); v != "" {
		var err error
		if seed, err = strconv.ParseInt(v, 10, 64); err != nil {
			t.Fatalf("%s=%q: want an integer", chaosSeedEnv, v)
		}
	}
	t.Logf("chaos seed %d (rerun with %s=%d)", seed, chaosSeedEnv, seed)
	return seed, rand.New(rand.NewPCG(uint64(seed), 0))
}

// otherServices take turns at the third kill of each chaos rollout: the
// rollout does not go through them, but no service may be the one whose
// death stalls it, and each must come back ready.
var otherServices = []string{"web", "notify-controller", "image-controller"}

// kill is one SIGKILL of a chaos test: which service, how long after the
// start.
type kill struct {
	at      time.Duration
	service string
}

// schedule is a chaos test's kills, in the order they come.
type schedule []kill

// killPlan draws a kill of each service within chaosWindow from rng.
func killPlan(rng *rand.Rand, services ...string) schedule {
	plan := make(schedule, 0, len(services))
	for _, s := range services {
		plan = append(plan, kill{time.Duration(rng.Int64N(int64(chaosWindow))), s})
	}
	sort.Slice(plan, func(a, b int) bool { return plan[a].at < plan[b].at })
	return plan
}

func (p schedule) String() string {
	parts := make([]string, len(p))
	for i, k := range p {
		parts[i] = fmt.Sprintf("kill %s at %s", k.service, k.at)
	}
	return strings.Join(parts, ", ")
}

// run kills and restarts each service at its time after start, counting
// the kills per service in count, and returns how many came before the
// Application shop of ns was deployed.
func (p schedule) run(t *testing.T, ns string, start time.Time, count map[string]int) (midRollout int) {
	t.Helper()
	for _, k := range p {
		time.Sleep(time.Until(start.Add(k.at)))
		if !deployed(t, ns, "shop") {
			midRollout++
		}
		restartService(t, k.service)
		count[k.service]++
	}
	return midRollout
}

// TestE2E_Chaos_KilledServicesCompleteEveryRolloutAndRunNoHookTwice sends
// SIGKILL to the sync-controller, the source-controller and one of the other
// services (in turn) at seeded random points of rollouts with a pre-sync
// hook, three waves and a post-sync hook, and restarts them. After each, the
// rollout completes, no hook Job was created twice, as counted from a watch
// on the API server, and the live objects are exactly the planned ones.
func TestE2E_Chaos_KilledServicesCompleteEveryRolloutAndRunNoHookTwice(t *testing.T) {
	rollouts := chaosRollouts(t)
	seed, rng := chaosSeed(t)
	t.Logf("%d rollouts", rollouts)
	clientset, err := kubernetes.NewForConfig(env.CP.Config)
	if err != nil {
		t.Fatal(err)
	}

	kills := map[string]int{}
	midRollout, completed, rerun := 0, 0, 0
	for i := range rollouts {
		ns := namespace(t, fmt.Sprintf("e2e-chaos-%d", i))
		jobs := watchJobCreations(t, clientset, ns)
		plan := killPlan(rng, "sync-controller", "source-controller", otherServices[i%len(otherServices)])
		t.Logf("rollout %d: %s", i, plan)
		start := time.Now()
		repository(t, ns, "platform", chaosRepository())
		midRollout += plan.run(t, ns, start, kills)
		waitHealthy(t, ns, "shop", "")
		completed++

		rev := get(t, &syncv1.Revision{}, ns, get(t, &syncv1.Application{}, ns, "shop").Status.DeployedRevision)
		for _, hook := range []string{"migrate", "smoke"} {
			if got := hookState(rev, hook); got != syncv1.HookSucceeded {
				t.Errorf("rollout %d (seed %d): hook %s is %q, want Succeeded", i, seed, hook, got)
			}
		}
		requireOnlyPlanned(t, ns, rev)
		for name, n := range jobs.created() {
			if n > 1 {
				rerun++
				t.Errorf("rollout %d (seed %d): hook Job %s created %d times", i, seed, name, n)
			}
		}
	}
	total := 0
	for _, n := range kills {
		total += n
	}
	t.Logf("chaos seed %d: %d kills (sync-controller %d, source-controller %d, web %d, notify-controller %d, image-controller %d; "+
		"%d before the rollout completed), %d/%d rollouts completed, %d hook Jobs created twice",
		seed, total, kills["sync-controller"], kills["source-controller"], kills["web"], kills["notify-controller"], kills["image-controller"],
		midRollout, completed, rollouts, rerun)
}

// chaosRepository is an Application with a pre-sync hook, a Deployment in
// each of three waves and a post-sync hook.
func chaosRepository() map[string]string {
	files := map[string]string{
		".ksync.yaml":      shopApplication,
		"app/migrate.yaml": hookJob("migrate", "pre-sync"),
		"app/smoke.yaml":   hookJob("smoke", "post-sync"),
	}
	for w := range 3 {
		name := fmt.Sprintf("web-%d", w)
		files["app/"+name+".yaml"] = fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
  annotations: {sync.kuvryn.io/sync-wave: "%[2]d"}
spec:
  replicas: 1
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec:
      containers: [{name: web, image: "web:1.0"}]
`, name, w)
	}
	return files
}

func deployed(t *testing.T, ns, name string) bool {
	t.Helper()
	var app syncv1.Application
	err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &app)
	return err == nil && app.Status.DeployedRevision != "" && app.Status.DeployedRevision == app.Status.DesiredRevision
}

// restartService kills service with SIGKILL and starts it again with the
// same flags, waiting until it is ready; the sync-controller is restarted
// only once its webhook serves again, as Applications cannot change without
// it.
func restartService(t *testing.T, service string) {
	t.Helper()
	running, ok := map[string]**harness.Process{
		"sync-controller": &syncController, "source-controller": &sourceController,
		"web": &services.Web, "notify-controller": &services.Notify, "image-controller": &services.Image,
	}[service]
	if !ok {
		t.Fatalf("no service %q to restart", service)
	}
	(*running).Kill()
	restarted, err := env.Restart(t.Context(), *running)
	if err != nil {
		t.Fatal(err)
	}
	*running = restarted
	if service == "sync-controller" {
		if err := controlplane.WaitForWebhooks(t.Context(), env.Client, "default", 2*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
}

// jobCreations counts, per Job name, the distinct objects (UIDs) the API
// server's watch reported in one namespace.
type jobCreations struct {
	mu   sync.Mutex
	uids map[string]map[types.UID]bool
}

func (j *jobCreations) created() map[string]int {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make(map[string]int, len(j.uids))
	for name, uids := range j.uids {
		out[name] = len(uids)
	}
	return out
}

// watchJobCreations watches the Jobs of ns until the test ends, watching
// again from the last resourceVersion whenever the API server ends a watch
// (as it does on timeouts and restarts), so no creation goes unseen.
func watchJobCreations(t *testing.T, clientset kubernetes.Interface, ns string) *jobCreations {
	t.Helper()
	j := &jobCreations{uids: map[string]map[types.UID]bool{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	first, err := clientset.BatchV1().Jobs(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(done)
		w, rv := watch.Interface(first), ""
		for {
			for ev := range w.ResultChan() {
				if ev.Type == watch.Error {
					// Too old a resourceVersion: watch from a fresh list,
					// whose ADDED events only repeat UIDs already counted.
					rv = ""
					continue
				}
				job, ok := ev.Object.(*batchv1.Job)
				if !ok {
					continue
				}
				rv = job.ResourceVersion
				j.mu.Lock()
				if j.uids[job.Name] == nil {
					j.uids[job.Name] = map[types.UID]bool{}
				}
				j.uids[job.Name][job.UID] = true
				j.mu.Unlock()
			}
			for {
				if ctx.Err() != nil {
					return
				}
				var err error
				if w, err = clientset.BatchV1().Jobs(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: rv}); err == nil {
					break
				}
				time.Sleep(time.Second)
			}
		}
	}()
	return j
}
