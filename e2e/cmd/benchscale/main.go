// Command benchscale measures Kuvryn Sync end to end from Git at the scale
// of many Applications, against a bare Server-Side Apply of the same
// objects in the same run (docs/benchmarks.md, `make bench-scale`).
//
// For each N it starts the local control plane, serves one Git repository
// with N apps (a ServiceAccount, a ConfigMap, a Service and a Deployment
// with replicas 0 each), runs the source-controller, the sync-controller
// and the web service's receiver as processes with their shipped defaults,
// and times: creating N automatic Applications until all are Synced and
// Healthy; a commit touching every app until all have deployed it; and
// single commits, each announced through the receiver, until applied.
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/e2e/harness"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/controlplane"
)

const (
	benchNamespace = "bench"
	bareNamespace  = "bare"
	webhookToken   = "bench-webhook-token"
)

// phaseTimeout bounds one phase of n Applications: the create phase of
// 10 000 took over 22 minutes for its first 2803 on this machine, so the
// bound grows with n.
func phaseTimeout(n int) time.Duration {
	return 30*time.Minute + time.Duration(n)*300*time.Millisecond
}

func main() {
	sizes := flag.String("n", "100,1000", "comma-separated numbers of Applications")
	commits := flag.Int("commits", 50, "single commits timed from push to applied")
	workers := flag.Int("workers", 20, "workers of the bare Server-Side Apply and of creating Applications")
	keep := flag.Bool("keep", false, "keep the working directory (logs of every service)")
	flag.StringVar(&extraFlags.source, "source-flags", "", "space-separated flags added to the source-controller's defaults")
	flag.StringVar(&extraFlags.sync, "sync-flags", "", "space-separated flags added to the sync-controller's defaults")
	flag.StringVar(&extraFlags.kcm, "kcm-flags", "", "space-separated flags added to kube-controller-manager's, such as \"--kube-api-qps=200 --kube-api-burst=400\"")
	flag.IntVar(&shardCount, "shards", 0, "run this many shards (s0, s1, ...) of the source- and sync-controller, each with its Repository and an equal slice of the Applications; 0 runs the default shard alone")
	flag.BoolVar(&runReplays, "replays", true, "after the phases, replay the services' recorded requests (at N = 10 000 they take as long as a phase)")
	flag.StringVar(&profileDir, "profiles", "", "directory for CPU profiles of kube-apiserver and both services, taken 10 s into each phase for 30 s, and the services' heap profiles after them")
	flag.Parse()
	if profileDir != "" {
		if err := os.MkdirAll(profileDir, 0o755); err != nil {
			fail(err)
		}
	}
	ctrl.SetLogger(logr.Discard())
	var ns []int
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fail(fmt.Errorf("-n: %q is not a positive number", s))
		}
		ns = append(ns, n)
	}
	fmt.Printf("bench-scale on %s: %d CPUs, %s; load average %s\n", hostname(), runtime.NumCPU(), memTotal(), loadAverage())
	if shardCount < 0 {
		fail(fmt.Errorf("-shards %d: must be 0 or more", shardCount))
	}
	if shardCount > 0 {
		fmt.Printf("%d shards: each runs its own source-controller and sync-controller over its Repository and 1/%d of the Applications\n", shardCount, shardCount)
	}
	if extraFlags.source != "" || extraFlags.sync != "" || extraFlags.kcm != "" {
		fmt.Printf("not the defaults: source-controller %q, sync-controller %q, kube-controller-manager %q\n", extraFlags.source, extraFlags.sync, extraFlags.kcm)
	}
	for _, n := range ns {
		r, err := measure(n, *commits, *workers, *keep)
		if err != nil {
			fail(fmt.Errorf("N=%d: %w", n, err))
		}
		r.print(os.Stdout)
	}
}

// extraFlags are flags added to the services' defaults, to compare settings.
var extraFlags struct{ source, sync, kcm string }

// shardCount is -shards: how many shards the Applications are spread over.
var shardCount int

// shardNames are the shards a run uses: "" (the default shard) without
// -shards, else s0, s1, ...
func shardNames() []string {
	if shardCount == 0 {
		return []string{""}
	}
	names := make([]string, shardCount)
	for i := range names {
		names[i] = fmt.Sprintf("s%d", i)
	}
	return names
}

// shardOf is the shard of app i.
func shardOf(i int) string { return shardNames()[i%len(shardNames())] }

// repositoryOf is the Repository of a shard's Applications.
func repositoryOf(shard string) string {
	if shard == "" {
		return "bench"
	}
	return "bench-" + shard
}

// runReplays is -replays: whether the recorded requests are replayed.
var runReplays = true

// progress tells what a long run has measured so far, before the summary
// its end prints.
func progress(format string, args ...any) {
	fmt.Printf("%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

// profileDir, when set, receives CPU profiles of each phase (see profile.go).
var profileDir string

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench-scale:", err)
	os.Exit(1)
}

// usage is what one service used during a phase.
type usage struct {
	requests float64
	cpu      time.Duration
	// reconciles counts controller_runtime_reconcile_total by result.
	reconciles map[string]float64
}

type phase struct {
	name  string
	start time.Time
	took  time.Duration
	bare  time.Duration
	// floor is the bare apply until kube-controller-manager observed every
	// Deployment it changed: what a phase waiting for health can approach.
	floor  time.Duration
	source usage
	sync   usage
	server map[string]float64
	// controlPlane is the CPU each control-plane process used.
	controlPlane map[string]time.Duration
}

type result struct {
	n, workers            int
	bareCreate, bareTouch time.Duration
	bareUnchanged         time.Duration
	// bareObserved is bareCreate plus the wait until kube-controller-manager
	// observed every bare Deployment: the floor of anything that waits for
	// health.
	bareObserved time.Duration
	// bareTouchObserved is the same for bareTouch.
	bareTouchObserved time.Duration
	// bareServerCPU is the CPU kube-apiserver used until observed, for the
	// create and for the change.
	bareServerCPU [2]time.Duration
	phases        []phase
	latencies     []time.Duration
	// shards are each shard's peaks of memory, in shardNames order.
	shards []shardMemory
	// replays are the replays of the services' recorded requests, after
	// the phases.
	replays []replayResult
	// recorded counts the requests the services sent in the create phase
	// per Application, by service, verb and resource; shared are those
	// of no one Application.
	recorded map[string]float64
	shared   int
}

// shardMemory is what one shard's controllers used at their peaks.
type shardMemory struct {
	name               string
	sourceHWM, syncHWM int64
	// sourceRSS and syncRSS are each service's peaks of anonymous and
	// file-backed memory.
	sourceRSS, syncRSS *rssPeaks
}

func measure(n, commits, workers int, keep bool) (res *result, err error) {
	dir, err := os.MkdirTemp("", fmt.Sprintf("kuvryn-bench-scale-%d-", n))
	if err != nil {
		return nil, err
	}
	if keep {
		fmt.Println("working directory:", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*phaseTimeout(n))
	defer cancel()
	env, err := harness.Start(ctx, harness.Options{Dir: dir, ControllerManagerFlags: strings.Fields(extraFlags.kcm)})
	if err != nil {
		return nil, err
	}
	defer env.Stop()
	for _, ns := range []string{benchNamespace, bareNamespace} {
		if err := env.Namespace(ctx, ns); err != nil {
			return nil, err
		}
	}

	repo, err := env.Git.CreateRepo("bench")
	if err != nil {
		return nil, err
	}
	if _, err := repo.Commit(appFiles(n, 1), fmt.Sprintf("%d apps", n)); err != nil {
		return nil, err
	}
	svc, err := startServices(ctx, env, dir)
	if err != nil {
		return nil, err
	}
	svc.setStage("the bare apply, services idle")
	res = &result{n: n, workers: workers}
	sampling, stopSampling := context.WithCancel(ctx)
	defer stopSampling()
	for _, sh := range svc.shards {
		m := shardMemory{name: sh.name, sourceRSS: &rssPeaks{}, syncRSS: &rssPeaks{}}
		go m.sourceRSS.follow(sampling, sh.source.Pid(), svc.currentStage)
		go m.syncRSS.follow(sampling, sh.sync.Pid(), svc.currentStage)
		res.shards = append(res.shards, m)
	}

	bare, err := bareClient(env.CP.Config)
	if err != nil {
		return nil, err
	}
	var createCPU, touchCPU time.Duration
	if res.bareCreate, res.bareObserved, createCPU, err = bareRollout(ctx, bare, n, 1, workers); err != nil {
		return nil, err
	}
	if res.bareTouch, res.bareTouchObserved, touchCPU, err = bareRollout(ctx, bare, n, 2, workers); err != nil {
		return nil, err
	}
	res.bareServerCPU = [2]time.Duration{createCPU, touchCPU}
	if res.bareUnchanged, err = bareApply(ctx, bare, n, 2, workers); err != nil {
		return nil, err
	}
	progress("bare create %s (observed %s), change %s (observed %s), unchanged %s",
		round(res.bareCreate), round(res.bareObserved), round(res.bareTouch), round(res.bareTouchObserved), round(res.bareUnchanged))

	apps, err := watchApplications(ctx, env.CP.Config)
	if err != nil {
		return nil, err
	}
	if err := env.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: benchNamespace, Name: "bench-webhook"},
		StringData: map[string]string{"token": webhookToken},
	}); err != nil {
		return nil, err
	}
	for _, shard := range shardNames() {
		if err := env.Client.Create(ctx, &syncv1.Repository{
			ObjectMeta: metav1.ObjectMeta{Namespace: benchNamespace, Name: repositoryOf(shard), Labels: shardLabels(shard)},
			Spec: syncv1.RepositorySpec{
				Git:     syncv1.GitSource{URL: repo.URL()},
				Webhook: &syncv1.WebhookSpec{SecretRef: syncv1.LocalObjectReference{Name: "bench-webhook"}},
			},
		}); err != nil {
			return nil, err
		}
	}
	head, err := repo.Head("main")
	if err != nil {
		return nil, err
	}

	p, err := svc.during(ctx, env, "create N Applications -> all Synced+Healthy", res.bareCreate, res.bareObserved, func() error {
		if err := createApplications(ctx, bare, n, workers); err != nil {
			return err
		}
		return apps.wait(ctx, n, head, allApps(n))
	})
	if err != nil {
		return nil, err
	}
	res.phases = append(res.phases, p)
	progress("%s: %s, %.1fx bare", p.name, round(p.took), p.took.Seconds()/p.bare.Seconds())
	// The create phase's record ends once the services are quiet, with the
	// last requests of the last Applications.
	if err := svc.settle(ctx, dir); err != nil {
		return nil, err
	}
	createEnd := time.Now()

	p, err = svc.during(ctx, env, "a commit touching every app -> all deployed", res.bareTouch, res.bareTouchObserved, func() error {
		commit, err := repo.Commit(appFiles(n, 2), "touch every app")
		if err != nil {
			return err
		}
		for _, shard := range shardNames() {
			if err := svc.push(ctx, repositoryOf(shard), repo.URL()); err != nil {
				return err
			}
		}
		return apps.wait(ctx, n, commit, allApps(n))
	})
	if err != nil {
		return nil, err
	}
	res.phases = append(res.phases, p)
	progress("%s: %s, %.1fx bare", p.name, round(p.took), p.took.Seconds()/p.bare.Seconds())

	svc.setStage("single commits")
	for i := range commits {
		app := (i * 7919) % n
		commit, err := repo.Commit(map[string]string{appPath(app, "configmap.yaml"): configMap(app, 3+i)}, fmt.Sprintf("app %d", app))
		if err != nil {
			return nil, err
		}
		start := time.Now()
		if err := svc.push(ctx, repositoryOf(shardOf(app)), repo.URL()); err != nil {
			return nil, err
		}
		if err := apps.wait(ctx, n, commit, []int{app}); err != nil {
			return nil, err
		}
		res.latencies = append(res.latencies, time.Since(start))
	}
	for i, sh := range svc.shards {
		if res.shards[i].sourceHWM, err = vmHWM(sh.source.Pid()); err != nil {
			return nil, err
		}
		if res.shards[i].syncHWM, err = vmHWM(sh.sync.Pid()); err != nil {
			return nil, err
		}
	}
	stopSampling()
	if err := svc.stop(ctx, env.Client); err != nil {
		return nil, err
	}
	rec, err := readRecord(dir, res.phases[0].start, createEnd)
	if err != nil {
		return nil, err
	}
	res.recorded, res.shared = rec.perApplication(n), len(rec.shared)
	if !runReplays {
		return res, nil
	}
	for _, rp := range replays {
		svc.setStage(rp.name)
		if err := env.Namespace(ctx, rp.namespace); err != nil {
			return nil, err
		}
		r, err := rp.run(ctx, env.CP.Config, rec, n, workers)
		if err != nil {
			return nil, err
		}
		res.replays = append(res.replays, r)
	}
	return res, nil
}

// services are the processes measured, with their metrics endpoints.
type services struct {
	shards        []shardServices
	web           *harness.Process
	receiver      string
	serverMetrics func(context.Context) (map[string]float64, error)
	// profilers are the /debug/pprof endpoints of each process, by name.
	profilers map[string]profiler
	// stage is what the benchmark is doing, for rssPeaks.
	stage atomic.Value
}

// shardServices are one shard's controllers and their metrics endpoints.
type shardServices struct {
	name                       string
	source, sync               *harness.Process
	sourceMetrics, syncMetrics string
}

func (s *services) setStage(what string) { s.stage.Store(what) }

func (s *services) currentStage() string {
	what, _ := s.stage.Load().(string)
	return what
}

func startServices(ctx context.Context, env *harness.Env, dir string) (*services, error) {
	addr := func() (string, error) {
		port, err := controlplane.FreePort()
		return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), err
	}
	s := &services{}
	var err error
	if s.receiver, err = addr(); err != nil {
		return nil, err
	}
	var sourcePprof, syncPprof []string
	if profileDir != "" {
		if sourcePprof, err = pprofFlag(addr); err != nil {
			return nil, err
		}
		if syncPprof, err = pprofFlag(addr); err != nil {
			return nil, err
		}
	}
	for i, shard := range shardNames() {
		sh := shardServices{name: shard}
		if sh.sourceMetrics, err = addr(); err != nil {
			return nil, err
		}
		if sh.syncMetrics, err = addr(); err != nil {
			return nil, err
		}
		leader := []string{"--leader-elect", "--leader-election-namespace=" + harness.SystemNamespace}
		if shard != "" {
			leader = append(leader, "--shard="+shard)
		}
		// Only the first shard's controllers are profiled.
		var srcProf, syncProf []string
		if i == 0 {
			srcProf, syncProf = sourcePprof, syncPprof
		}
		if sh.source, err = env.StartService(ctx, "source-controller", append(append(append(leader, srcProf...),
			"--source-cache-dir="+filepath.Join(dir, "cache"+shard), "--metrics-bind-address="+sh.sourceMetrics, "--metrics-secure=false",
			"--record-api-requests="+recordFile(dir, "source-controller", shard)), strings.Fields(extraFlags.source)...)...); err != nil {
			return nil, err
		}
		// The admission webhook is registered for the first shard's
		// sync-controller; every replica serves it for every object.
		var webhookFlags []string
		if i == 0 {
			webhookFlags, err = env.EnableWebhooks(ctx)
		} else {
			var port string
			port, err = addr()
			webhookFlags = []string{"--webhook-bind-address=" + port, "--webhook-cert-path=" + filepath.Join(dir, "webhook-certs")}
		}
		if err != nil {
			return nil, err
		}
		if sh.sync, err = env.StartService(ctx, "sync-controller", append(append(append(append(leader, syncProf...), webhookFlags...),
			"--metrics-bind-address="+sh.syncMetrics, "--metrics-secure=false", "--record-api-requests="+recordFile(dir, "sync-controller", shard)),
			strings.Fields(extraFlags.sync)...)...); err != nil {
			return nil, err
		}
		s.shards = append(s.shards, sh)
	}
	if s.web, err = env.StartService(ctx, "web", "--leader-elect", "--leader-election-namespace="+harness.SystemNamespace,
		"--webhook-receiver-bind-address="+s.receiver); err != nil {
		return nil, err
	}
	for _, p := range s.all() {
		if err := p.WaitReady(ctx, 2*time.Minute); err != nil {
			return nil, err
		}
	}
	if err := controlplane.WaitForWebhooks(ctx, env.Client, "default", 2*time.Minute); err != nil {
		return nil, err
	}
	kube, err := kubernetes.NewForConfig(env.CP.Config)
	if err != nil {
		return nil, err
	}
	s.serverMetrics = func(ctx context.Context) (map[string]float64, error) {
		body, err := kube.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
		if err != nil {
			return nil, err
		}
		return serverRequests(body), nil
	}
	if profileDir != "" {
		s.profilers = profilers(kube, sourcePprof, syncPprof)
	}
	return s, nil
}

// all are every process measured, the web service last.
func (s *services) all() []*harness.Process {
	var out []*harness.Process
	for _, sh := range s.shards {
		out = append(out, sh.source, sh.sync)
	}
	return append(out, s.web)
}

// usage sums what every shard's source-controllers and sync-controllers
// used so far.
func (s *services) usages(ctx context.Context) (source, sync usage, err error) {
	source, sync = usage{reconciles: map[string]float64{}}, usage{reconciles: map[string]float64{}}
	for _, sh := range s.shards {
		src, err := s.usage(ctx, sh.source, sh.sourceMetrics)
		if err != nil {
			return source, sync, err
		}
		syn, err := s.usage(ctx, sh.sync, sh.syncMetrics)
		if err != nil {
			return source, sync, err
		}
		source, sync = source.plus(src), sync.plus(syn)
	}
	return source, sync, nil
}

// settle returns once the services' record files in dir have not grown
// for a second, or after 30 s of requests: the services are quiet then.
func (s *services) settle(ctx context.Context, dir string) error {
	size := func() (int64, error) {
		var total int64
		for _, sh := range s.shards {
			for _, service := range recordedServices {
				info, err := os.Stat(recordFile(dir, service, sh.name))
				if err != nil {
					return 0, err
				}
				total += info.Size()
			}
		}
		return total, nil
	}
	last, err := size()
	if err != nil {
		return err
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
		now, err := size()
		if err != nil {
			return err
		}
		if now == last {
			return nil
		}
		last = now
	}
	return nil
}

// stop stops the services and removes the admission webhooks the
// sync-controller served, so that nothing but the replays' client writes.
func (s *services) stop(ctx context.Context, c client.Client) error {
	for _, p := range s.all() {
		p.Stop()
	}
	if err := c.DeleteAllOf(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{}); err != nil {
		return err
	}
	return c.DeleteAllOf(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{})
}

// during runs f and returns its time with what each service used meanwhile.
func (s *services) during(ctx context.Context, env *harness.Env, name string, bare, floor time.Duration, f func() error) (phase, error) {
	p := phase{name: name, bare: bare, floor: floor}
	s.setStage(name)
	src0, sync0, err := s.usages(ctx)
	if err != nil {
		return p, err
	}
	srv0, err := s.serverMetrics(ctx)
	if err != nil {
		return p, err
	}
	cp0, err := controlPlaneCPU()
	if err != nil {
		return p, err
	}
	start := time.Now()
	p.start = start
	profiled := s.profile(ctx, name)
	if err := f(); err != nil {
		_ = profiled(true)
		if exited := env.Exited(); exited != nil {
			return p, fmt.Errorf("%s: %w (%v)", name, err, exited)
		}
		return p, fmt.Errorf("%s: %w", name, err)
	}
	p.took = time.Since(start)
	if err := profiled(false); err != nil {
		return p, err
	}
	src1, sync1, err := s.usages(ctx)
	if err != nil {
		return p, err
	}
	srv1, err := s.serverMetrics(ctx)
	if err != nil {
		return p, err
	}
	cp1, err := controlPlaneCPU()
	if err != nil {
		return p, err
	}
	p.controlPlane = map[string]time.Duration{}
	for k, v := range cp1 {
		p.controlPlane[k] = v - cp0[k]
	}
	p.source = src1.minus(src0)
	p.sync = sync1.minus(sync0)
	p.server = map[string]float64{}
	for k, v := range srv1 {
		if d := v - srv0[k]; d > 0 {
			p.server[k] = d
		}
	}
	return p, nil
}

func (u usage) plus(other usage) usage {
	sum := usage{requests: u.requests + other.requests, cpu: u.cpu + other.cpu, reconciles: map[string]float64{}}
	for _, m := range []map[string]float64{u.reconciles, other.reconciles} {
		for k, v := range m {
			sum.reconciles[k] += v
		}
	}
	return sum
}

func (u usage) minus(before usage) usage {
	d := usage{requests: u.requests - before.requests, cpu: u.cpu - before.cpu, reconciles: map[string]float64{}}
	for k, v := range u.reconciles {
		if v -= before.reconciles[k]; v > 0 {
			d.reconciles[k] = v
		}
	}
	return d
}

func (s *services) usage(ctx context.Context, p *harness.Process, metrics string) (usage, error) {
	body, err := fetch(ctx, "http://"+metrics+"/metrics")
	if err != nil {
		return usage{}, fmt.Errorf("%s metrics: %w", p.Name, err)
	}
	u := usage{reconciles: map[string]float64{}}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "rest_client_requests_total{") {
			f := strings.Fields(line)
			v, err := strconv.ParseFloat(f[len(f)-1], 64)
			if err != nil {
				return usage{}, fmt.Errorf("%s metrics: %q: %w", p.Name, line, err)
			}
			u.requests += v
		}
		if strings.HasPrefix(line, "controller_runtime_reconcile_total{") {
			f := strings.Fields(line)
			v, err := strconv.ParseFloat(f[len(f)-1], 64)
			if err != nil {
				return usage{}, fmt.Errorf("%s metrics: %q: %w", p.Name, line, err)
			}
			_, result, _ := strings.Cut(line, `result="`)
			result, _, _ = strings.Cut(result, `"`)
			u.reconciles[result] += v
		}
	}
	if err := sc.Err(); err != nil {
		return usage{}, err
	}
	u.cpu, err = cpuTime(p.Pid())
	return u, err
}

// push announces a push of url to the receiver as GitLab does, for the
// Repository repository.
func (s *services) push(ctx context.Context, repository, url string) error {
	body := fmt.Sprintf(`{"object_kind":"push","project":{"git_http_url":%q}}`, url)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost,
		"http://"+s.receiver+"/hooks/"+benchNamespace+"/"+repository, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Gitlab-Event", "Push Hook")
	req.Header.Set("X-Gitlab-Token", webhookToken)
	for attempt := 0; ; attempt++ {
		req.Body = io.NopCloser(strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusAccepted {
				return nil
			}
			err = fmt.Errorf("receiver answered %s", resp.Status)
		}
		if attempt == 5 {
			return err
		}
		time.Sleep(time.Second)
	}
}

// applications watches every Application of the bench namespace.
type applications struct {
	cache cache.Cache
}

func watchApplications(ctx context.Context, cfg *rest.Config) (*applications, error) {
	// wait reads every pending Application ten times a second: copying
	// each of 10 000 would take the benchmark's own process half a core
	// from the services it measures.
	noCopy := true
	c, err := cache.New(cfg, cache.Options{Scheme: manager.Scheme(), DefaultNamespaces: map[string]cache.Config{benchNamespace: {}}, DefaultUnsafeDisableDeepCopy: &noCopy})
	if err != nil {
		return nil, err
	}
	if _, err := c.GetInformer(ctx, &syncv1.Application{}); err != nil {
		return nil, err
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("the Application cache did not sync")
	}
	return &applications{cache: c}, nil
}

// wait returns once every Application of which has deployed commit and is
// Synced and Healthy.
func (a *applications) wait(ctx context.Context, n int, commit string, which []int) error {
	deadline := time.Now().Add(phaseTimeout(n))
	pending := slices.Clone(which)
	for {
		var left []int
		for _, i := range pending {
			var app syncv1.Application
			err := a.cache.Get(ctx, client.ObjectKey{Namespace: benchNamespace, Name: appName(i)}, &app)
			st := app.Status
			if err != nil || st.SourceCommit != commit || st.DeployedRevision == "" || st.DeployedRevision != st.DesiredRevision ||
				st.Sync != syncv1.SyncStateSynced || st.Health != syncv1.HealthHealthy {
				left = append(left, i)
			}
		}
		if pending = left; len(pending) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d Applications did not deploy commit %s within %s (first: %s)", len(pending), len(which), commit, phaseTimeout(n), appName(pending[0]))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func createApplications(ctx context.Context, c client.Client, n, workers int) error {
	return parallel(n, workers, func(i int) error {
		return c.Create(ctx, application(i, benchNamespace))
	})
}

// application is app i's Application in namespace.
func application(i int, namespace string) *syncv1.Application {
	return &syncv1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: appName(i), Labels: shardLabels(shardOf(i))},
		Spec: syncv1.ApplicationSpec{
			Source:             syncv1.ApplicationSource{RepositoryRef: syncv1.LocalObjectReference{Name: repositoryOf(shardOf(i))}, Path: "apps/" + appName(i)},
			ServiceAccountName: "deployer",
			Sync:               syncv1.SyncPolicy{Automatic: true},
		},
	}
}

// shardLabels put an object in shard; none for the default shard.
func shardLabels(shard string) map[string]string {
	if shard == "" {
		return nil
	}
	return map[string]string{syncv1.ShardLabel: shard}
}

// bareClient applies as cfg's user without client-side rate limits, as the
// services do.
func bareClient(cfg *rest.Config) (client.Client, error) {
	return client.New(unlimited(cfg), client.Options{Scheme: manager.Scheme()})
}

// unlimited is a copy of cfg without client-side rate limits, so that
// only the API server sets the pace.
func unlimited(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst = -1, 0
	return c
}

// bareRollout applies version v of every app's objects, then waits until
// kube-controller-manager has observed every Deployment. It returns how
// long the apply took, how long until observed, and kube-apiserver's CPU
// time meanwhile.
func bareRollout(ctx context.Context, c client.Client, n, v, workers int) (apply, observed, serverCPU time.Duration, err error) {
	before, err := controlPlaneCPU()
	if err != nil {
		return 0, 0, 0, err
	}
	if apply, err = bareApply(ctx, c, n, v, workers); err != nil {
		return 0, 0, 0, err
	}
	if observed, err = deploymentsObserved(ctx, c, bareNamespace, n); err != nil {
		return 0, 0, 0, err
	}
	after, err := controlPlaneCPU()
	if err != nil {
		return 0, 0, 0, err
	}
	return apply, apply + observed, after[apiServer] - before[apiServer], nil
}

// bareApply server-side-applies the objects of every app at version v into
// the bare namespace with workers in parallel.
func bareApply(ctx context.Context, c client.Client, n, v, workers int) (time.Duration, error) {
	var objs []*unstructured.Unstructured
	for i := range n {
		for _, doc := range appDocuments(i, v) {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
				return 0, err
			}
			u.SetNamespace(bareNamespace)
			objs = append(objs, u)
		}
	}
	start := time.Now()
	err := parallel(len(objs), workers, func(i int) error {
		return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(objs[i]), client.FieldOwner("bench-bare"), client.ForceOwnership)
	})
	return time.Since(start), err
}

// deploymentsObserved waits until kube-controller-manager has observed the
// current generation of the n Deployments in namespace, and returns how
// long it took.
func deploymentsObserved(ctx context.Context, c client.Client, namespace string, n int) (time.Duration, error) {
	start := time.Now()
	for {
		var list appsv1.DeploymentList
		if err := c.List(ctx, &list, client.InNamespace(namespace)); err != nil {
			return 0, err
		}
		observed := 0
		for _, d := range list.Items {
			if d.Status.ObservedGeneration >= d.Generation {
				observed++
			}
		}
		if observed == n {
			return time.Since(start), nil
		}
		if time.Since(start) > phaseTimeout(n) {
			return 0, fmt.Errorf("kube-controller-manager observed %d of %d Deployments within %s", observed, n, phaseTimeout(n))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func parallel(n, workers int, f func(int) error) error {
	jobs := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range jobs {
				if err := f(i); err != nil {
					errs <- err
					for range jobs {
					}
					return
				}
			}
		})
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	close(errs)
	return <-errs
}

func allApps(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func appName(i int) string           { return fmt.Sprintf("app-%04d", i) }
func appPath(i int, f string) string { return "apps/" + appName(i) + "/" + f }

// appFiles is the tree of n apps at version v.
func appFiles(n, v int) map[string]string {
	files := map[string]string{}
	for i := range n {
		docs := appDocuments(i, v)
		for j, f := range []string{"serviceaccount.yaml", "configmap.yaml", "service.yaml", "deployment.yaml"} {
			files[appPath(i, f)] = docs[j]
		}
	}
	return files
}

// appDocuments are the objects of app i at version v. The Service is
// headless: the test control plane's Service range holds fewer cluster IPs
// than the 2N Services of a run at N = 1000.
func appDocuments(i, v int) []string {
	name := appName(i)
	return []string{
		"apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: " + name + "}\n",
		configMap(i, v),
		"apiVersion: v1\nkind: Service\nmetadata: {name: " + name + "}\nspec:\n  clusterIP: None\n  selector: {app: " + name + "}\n  ports: [{port: 80, targetPort: 8080}]\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: " + name + "}\nspec:\n  replicas: 0\n  selector: {matchLabels: {app: " + name + "}}\n" +
			"  template:\n    metadata: {labels: {app: " + name + "}}\n    spec:\n      serviceAccountName: " + name +
			"\n      containers: [{name: app, image: \"registry.invalid/app:" + strconv.Itoa(min(v, 2)) + "\"}]\n",
	}
}

func configMap(i, v int) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + appName(i) + "}\ndata: {version: \"" + strconv.Itoa(v) + "\"}\n"
}

func (r *result) print(w *os.File) {
	objects := float64(4 * r.n)
	fmt.Fprintf(w, "\nN=%d Applications, %d objects\n", r.n, 4*r.n)
	fmt.Fprintf(w, "  bare Server-Side Apply, %d workers: create %s, a change to every app %s, unchanged %s\n",
		r.workers, round(r.bareCreate), round(r.bareTouch), round(r.bareUnchanged))
	fmt.Fprintf(w, "  bare apply until kube-controller-manager observed every Deployment (the floor of waiting for health): create %s, change %s; kube-apiserver CPU meanwhile %s, %s\n",
		round(r.bareObserved), round(r.bareTouchObserved), round(r.bareServerCPU[0]), round(r.bareServerCPU[1]))
	for i, p := range r.phases {
		fmt.Fprintf(w, "  %-46s %9s  %5.1fx bare  %4.1fx floor  %6.1f apps/s\n", p.name, round(p.took),
			p.took.Seconds()/p.bare.Seconds(), p.took.Seconds()/p.floor.Seconds(), float64(r.n)/p.took.Seconds())
		if i < len(r.bareServerCPU) && r.bareServerCPU[i] > 0 {
			fmt.Fprintf(w, "      kube-apiserver CPU %s, %.1fx the bare apply's until observed\n",
				round(p.controlPlane[apiServer]), p.controlPlane[apiServer].Seconds()/r.bareServerCPU[i].Seconds())
		}
		fmt.Fprintf(w, "      source-controller: %5.1f API requests/object, CPU %s; sync-controller: %5.1f API requests/object, CPU %s\n",
			p.source.requests/objects, round(p.source.cpu), p.sync.requests/objects, round(p.sync.cpu))
		fmt.Fprintf(w, "      reconciles: source-controller %s; sync-controller %s\n", top(p.source.reconciles, 5), top(p.sync.reconciles, 5))
		fmt.Fprintf(w, "      control-plane CPU: %s\n", cpuList(p.controlPlane))
		fmt.Fprintf(w, "      API server requests: %s\n", top(p.server, 12))
	}
	if len(r.latencies) > 0 {
		fmt.Fprintf(w, "  push -> applied over %d single commits (through the receiver): p50 %s, p95 %s\n",
			len(r.latencies), round(percentile(r.latencies, 50)), round(percentile(r.latencies, 95)))
	}
	for _, m := range r.shards {
		shard := ""
		if m.name != "" {
			shard = " of shard " + m.name
		}
		fmt.Fprintf(w, "  peak RSS (VmHWM)%s: source-controller %d MiB, sync-controller %d MiB\n", shard, m.sourceHWM>>10, m.syncHWM>>10)
		fmt.Fprintf(w, "      peaks of its parts: source-controller %s; sync-controller %s\n", m.sourceRSS, m.syncRSS)
	}
	if len(r.recorded) > 0 {
		fmt.Fprintf(w, "  the services' requests in the create phase, recorded (--record-api-requests), per Application; %d more of no one Application:\n", r.shared)
		printRecorded(w, r.recorded)
	}
	for _, rp := range r.replays {
		fmt.Fprintf(w, "  %-46s %9s  %5.1fx bare  until observed %s, %4.1fx floor; %.1f requests/object\n", rp.name, round(rp.took),
			rp.took.Seconds()/r.bareCreate.Seconds(), round(rp.observed), rp.observed.Seconds()/r.bareObserved.Seconds(), float64(rp.requests)/objects)
		if r.bareServerCPU[0] > 0 {
			fmt.Fprintf(w, "      kube-apiserver CPU %s, %.1fx the bare apply's until observed\n", round(rp.serverCPU), rp.serverCPU.Seconds()/r.bareServerCPU[0].Seconds())
		}
		if len(rp.otherwise) > 0 {
			fmt.Fprintf(w, "      answered otherwise than recorded: %s\n", top(rp.otherwise, 5))
		}
	}
}

// printRecorded prints requests per Application by service, most first.
func printRecorded(w io.Writer, perApp map[string]float64) {
	keys := make([]string, 0, len(perApp))
	for k := range perApp {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		si, _, _ := strings.Cut(keys[i], " ")
		sj, _, _ := strings.Cut(keys[j], " ")
		if si != sj {
			return si < sj
		}
		if perApp[keys[i]] != perApp[keys[j]] {
			return perApp[keys[i]] > perApp[keys[j]]
		}
		return keys[i] < keys[j]
	})
	total := map[string]float64{}
	for _, k := range keys {
		service, _, _ := strings.Cut(k, " ")
		total[service] += perApp[k]
	}
	for _, k := range keys {
		service, what, _ := strings.Cut(k, " ")
		fmt.Fprintf(w, "      %6.2f  %-18s %s\n", perApp[k], service, what)
	}
	for _, service := range recordedServices {
		fmt.Fprintf(w, "      %6.2f  %-18s in all\n", total[service], service)
	}
}

func cpuList(m map[string]time.Duration) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %s", k, round(m[k])))
	}
	return strings.Join(parts, ", ")
}

func round(d time.Duration) time.Duration {
	if d > 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(10 * time.Millisecond)
}

func percentile(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}

func top(m map[string]float64, k int) string {
	keys := make([]string, 0, len(m))
	for key := range m {
		keys = append(keys, key)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] })
	var parts []string
	for _, key := range keys[:min(k, len(keys))] {
		parts = append(parts, fmt.Sprintf("%s %.0f", key, m[key]))
	}
	return strings.Join(parts, ", ")
}

// serverRequests sums apiserver_request_total by verb and resource.
func serverRequests(metrics []byte) map[string]float64 {
	out := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(metrics))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		labels := line[len("apiserver_request_total{"):strings.LastIndex(line, "}")]
		var verb, resource, subresource string
		for _, kv := range strings.Split(labels, ",") {
			k, v, _ := strings.Cut(kv, "=")
			v = strings.Trim(v, `"`)
			switch k {
			case "verb":
				verb = v
			case "resource":
				resource = v
			case "subresource":
				subresource = v
			}
		}
		if subresource != "" {
			resource += "/" + subresource
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err == nil {
			out[verb+" "+resource] += v
		}
	}
	return out
}
