package revision

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/desiredstate"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/pkg/ssa"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/impersonate"
)

// The benchmarks below measure what the project promises to keep small: the
// cost of a Kuvryn Sync rollout next to a bare Server-Side Apply of the same
// objects, on the suite's real control plane.
//
// Every rollout iteration is the steady state of GitOps: a new desired
// Revision of an already deployed Application that changes one value in
// every object, so every object is planned (read and dry-run), applied as an
// update and checked for health. The bare Server-Side Apply it is compared
// with applies the same change to the same number of existing objects, one
// after the other with one client, in a twin namespace, while the
// controller is idle. The first deployment (all creates) is setup and is
// not timed.
//
// The clock of a rollout runs from publishing the Revisions (what the
// source-controller does: a Revision, its desired-state Secret and
// status.desiredRevision, three API calls per Application) until every
// Application reports the Revision deployed and Healthy. What the
// controller does afterwards in reaction to its own writes (drift checks
// brought by the watches of the applied kinds) is not timed, but is waited
// out, so that it never overlaps the next measurement, and counted in
// settle-calls/object.
//
// Metrics: objects/s of the rollout; x-bare-ssa, the rollout's time over
// the bare apply's; api-calls/object, the requests the controller made (the
// service-account clients included) per object until the rollout finished,
// and settle-calls/object, those it made after, until it fell idle; and
// ctrl-heap-MB, the live heap the process gained while the controller ran,
// after garbage collection.

// benchConcurrentReconciles is the manager's default, main.go's concurrentReconciles.
const benchConcurrentReconciles = 4

// benchQuiet is how long the controller must make no API call to count as idle.
const benchQuiet = time.Second

// benchFieldManager applies the bare Server-Side Apply baseline.
const benchFieldManager = "bench-bare-ssa"

// apiCalls counts the requests a client config makes and those in flight.
type apiCalls struct {
	started  atomic.Int64
	inFlight atomic.Int64
}

type countingTransport struct {
	next  http.RoundTripper
	calls *apiCalls
}

func (t countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.calls.started.Add(1)
	t.calls.inFlight.Add(1)
	defer t.calls.inFlight.Add(-1)
	return t.next.RoundTrip(req)
}

// benchConfig is the suite's admin config as a deployed manager has it:
// ctrl.GetConfig turns client-side rate limiting off (QPS -1) and leaves
// fairness to the API server, while the suite's config keeps client-go's
// default of 5 requests per second. With calls, every request is counted.
func benchConfig(calls *apiCalls) *rest.Config {
	cfg := rest.CopyConfig(cp.Config)
	cfg.QPS = -1
	if calls != nil {
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return countingTransport{next: rt, calls: calls} })
	}
	return cfg
}

// benchAdmin is an unthrottled admin client for setup and the baseline.
func benchAdmin(tb testing.TB) client.WithWatch {
	tb.Helper()
	c, err := client.NewWithWatch(benchConfig(nil), client.Options{Scheme: manager.Scheme()})
	must(tb, err)
	return c
}

// startBenchController runs the reconciler over ns with the manager's
// defaults, counting its requests in calls, until the benchmark ends.
func startBenchController(tb testing.TB, ns string, calls *apiCalls) {
	tb.Helper()
	mgr, err := ctrl.NewManager(benchConfig(calls), ctrl.Options{
		Scheme:                 manager.Scheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	must(tb, err)
	ctx, cancel := context.WithCancel(context.Background())
	o := Options{
		MaxConcurrentReconciles: benchConcurrentReconciles,
		DriftResyncInterval:     5 * time.Minute,
		RetryInterval:           30 * time.Second,
	}
	must(tb, New(mgr, o).SetupWithManager(ctx, mgr))
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	tb.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			tb.Errorf("manager stopped with: %v", err)
		}
	})
}

// benchSettings is ConfigMap i of app at release: about 3 KB of settings,
// as real configuration is, and the release, the one value every new
// Revision changes.
func benchSettings(app string, i, release int) *unstructured.Unstructured {
	var settings strings.Builder
	for k := range 60 {
		fmt.Fprintf(&settings, "service.%02d.endpoint=https://svc-%02d.%s.example.com:8443/api\n", k, k, app)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata": map[string]any{
			"name":   fmt.Sprintf("%s-settings-%03d", app, i),
			"labels": map[string]any{"app.kubernetes.io/name": app, "app.kubernetes.io/part-of": "bench"},
		},
		"data": map[string]any{"app.properties": settings.String(), "release": strconv.Itoa(release)},
	}}
}

// benchPublish does what publish does, for a benchmark: it stores objs as a
// new Revision of app and makes it the desired one.
func benchPublish(tb testing.TB, c client.Client, ns, app string, objs []*unstructured.Unstructured) string {
	tb.Helper()
	ctx := context.Background()
	data, digest, err := desiredstate.Encode(objs)
	must(tb, err)
	name := desiredstate.RevisionName(app, digest)
	rev := &syncv1.Revision{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{syncv1.ApplicationLabel: app}},
		Spec: syncv1.RevisionSpec{
			ApplicationName: app,
			DesiredState:    syncv1.DesiredStateRef{SecretName: name, Digest: digest, Objects: int32(len(objs))},
		},
	}
	must(tb, c.Create(ctx, rev))
	must(tb, c.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name, Labels: map[string]string{syncv1.ApplicationLabel: app},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: syncv1.GroupVersion.String(), Kind: "Revision", Name: rev.Name, UID: rev.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Type: syncv1.DesiredStateSecretType,
		Data: map[string][]byte{desiredstate.DataKey: data},
	}))
	app0 := &syncv1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: app}}
	must(tb, ssa.ApplyStatus(ctx, c, app0, syncv1.FieldManagerSource, map[string]any{"desiredRevision": name}))
	return name
}

// benchApplyAll is the baseline: a Server-Side Apply of every object into
// ns, one after the other, as kubectl apply --server-side does.
func benchApplyAll(tb testing.TB, c client.Client, ns string, objs []*unstructured.Unstructured) {
	tb.Helper()
	for _, obj := range objs {
		o := obj.DeepCopy()
		o.SetNamespace(ns)
		if err := c.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(o), client.FieldOwner(benchFieldManager)); err != nil {
			tb.Fatalf("applying ConfigMap %s/%s: %v", ns, o.GetName(), err)
		}
	}
}

// benchAwaitDeployed reads w until every Application of want has deployed
// its Revision and is Healthy, and fails the benchmark on a failed Revision.
func benchAwaitDeployed(tb testing.TB, c client.Client, ns string, w watch.Interface, want map[string]string) {
	tb.Helper()
	pending := make(map[string]string, len(want))
	for app, rev := range want {
		pending[app] = rev
	}
	deadline := time.After(timeout)
	for len(pending) > 0 {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				tb.Fatal("the watch of Applications closed before every rollout finished")
			}
			app, ok := ev.Object.(*syncv1.Application)
			if !ok {
				continue
			}
			rev, wanted := pending[app.Name]
			if !wanted || app.Status.DesiredRevision != rev {
				continue
			}
			switch {
			case app.Status.DeployedRevision == rev && app.Status.Phase == syncv1.PhaseHealthy:
				delete(pending, app.Name)
			case app.Status.Phase == syncv1.PhaseFailed:
				tb.Fatalf("Application %s/%s: Revision %s failed: %v", ns, app.Name, rev, app.Status.Conditions)
			}
		case <-deadline:
			for app, rev := range pending {
				r := &syncv1.Revision{}
				err := c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: rev}, r)
				tb.Fatalf("timed out after %s waiting for %d Application(s), %s among them, to deploy; Revision %s (%v):\n%s",
					timeout, len(pending), app, rev, err, describeRevision(r))
			}
		}
	}
}

// benchAwaitQuiet waits until the controller has made no request for
// benchQuiet and has none in flight.
func benchAwaitQuiet(tb testing.TB, calls *apiCalls) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	last, since := calls.started.Load(), time.Now()
	for {
		time.Sleep(50 * time.Millisecond)
		n := calls.started.Load()
		switch {
		case n != last || calls.inFlight.Load() > 0:
			last, since = n, time.Now()
		case time.Since(since) >= benchQuiet:
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("the controller was still busy after %s", timeout)
		}
	}
}

// liveHeap is the heap in use after a garbage collection.
func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// benchRollouts rolls out, per iteration, a new Revision of each of apps
// Applications of perApp objects, and the same change with a bare
// Server-Side Apply, and reports both.
func benchRollouts(b *testing.B, apps, perApp int) {
	c := benchAdmin(b)
	ns, twin := applierNamespace(b, c, "bench-"), applierNamespace(b, c, "bench-")
	heapBefore := liveHeap()
	calls := &apiCalls{}
	startBenchController(b, ns, calls)

	names := make([]string, apps)
	for i := range names {
		names[i] = fmt.Sprintf("app-%03d", i)
		must(b, c.Create(context.Background(), &syncv1.Application{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: names[i]},
			Spec: syncv1.ApplicationSpec{
				Source:             syncv1.ApplicationSource{RepositoryRef: syncv1.LocalObjectReference{Name: "repo"}},
				ServiceAccountName: serviceAccount,
				Sync:               syncv1.SyncPolicy{Automatic: true},
			},
		}))
	}
	desired := func(release int) (perAppObjs map[string][]*unstructured.Unstructured, all []*unstructured.Unstructured) {
		perAppObjs = make(map[string][]*unstructured.Unstructured, apps)
		for _, app := range names {
			for i := range perApp {
				obj := benchSettings(app, i, release)
				perAppObjs[app] = append(perAppObjs[app], obj)
				all = append(all, obj)
			}
		}
		return perAppObjs, all
	}
	// rollOut publishes a new Revision of every Application and waits for
	// all of them to be deployed.
	rollOut := func(objs map[string][]*unstructured.Unstructured) {
		w, err := c.Watch(context.Background(), &syncv1.ApplicationList{}, client.InNamespace(ns))
		must(b, err)
		defer w.Stop()
		want := make(map[string]string, apps)
		for _, app := range names {
			want[app] = benchPublish(b, c, ns, app, objs[app])
		}
		benchAwaitDeployed(b, c, ns, w, want)
	}

	release := 0
	first, all := desired(release)
	benchApplyAll(b, c, twin, all)
	rollOut(first)
	benchAwaitQuiet(b, calls)

	var rolloutTime, bareTime time.Duration
	var rolledOut, requests, settleRequests int64
	for b.Loop() {
		b.StopTimer()
		release++
		next, all := desired(release)
		start := time.Now()
		benchApplyAll(b, c, twin, all)
		bareTime += time.Since(start)
		before := calls.started.Load()
		b.StartTimer()

		start = time.Now()
		rollOut(next)
		rolloutTime += time.Since(start)

		b.StopTimer()
		deployed := calls.started.Load()
		benchAwaitQuiet(b, calls)
		requests += deployed - before
		settleRequests += calls.started.Load() - deployed
		rolledOut += int64(len(all))
		b.StartTimer()
	}

	// The last release is live: the rollouts did the work they were timed for.
	live := &corev1.ConfigMap{}
	must(b, c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: names[0] + "-settings-000"}, live))
	if got := live.Data["release"]; got != strconv.Itoa(release) {
		b.Fatalf("ConfigMap %s/%s has release %q after the rollouts, want %d", ns, live.Name, got, release)
	}
	b.ReportMetric(float64(rolledOut)/rolloutTime.Seconds(), "objects/s")
	b.ReportMetric(rolloutTime.Seconds()/bareTime.Seconds(), "x-bare-ssa")
	b.ReportMetric(float64(requests)/float64(rolledOut), "api-calls/object")
	b.ReportMetric(float64(settleRequests)/float64(rolledOut), "settle-calls/object")
	b.ReportMetric(float64(liveHeap()-heapBefore)/(1<<20), "ctrl-heap-MB")
}

// BenchmarkRollout_Objects rolls out one Application of n objects.
func BenchmarkRollout_Objects(b *testing.B) {
	for _, n := range []int{100, 500} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) { benchRollouts(b, 1, n) })
	}
}

// BenchmarkRollout_Applications rolls out 50 Applications of 10 objects at
// once, benchConcurrentReconciles of them at a time, against a bare
// Server-Side Apply of the same 500 objects with one client.
func BenchmarkRollout_Applications(b *testing.B) {
	b.Run("apps=50", func(b *testing.B) { benchRollouts(b, 50, 10) })
}

// BenchmarkBareSSA_Objects is the baseline alone: a Server-Side Apply that
// changes one value in each of n existing ConfigMaps, one after the other
// with one client, as the admin, and as the service account an Application
// applies as (impersonated, as the controller does), to show what
// impersonation costs.
func BenchmarkBareSSA_Objects(b *testing.B) {
	for _, tt := range []struct {
		n  int
		as string
	}{{100, "admin"}, {100, "serviceaccount"}, {500, "admin"}} {
		b.Run(fmt.Sprintf("n=%d/as=%s", tt.n, tt.as), func(b *testing.B) {
			admin := benchAdmin(b)
			ns := applierNamespace(b, admin, "bench-")
			cfg := benchConfig(nil)
			if tt.as == "serviceaccount" {
				cfg.Impersonate = rest.ImpersonationConfig{UserName: impersonate.UserName(types.NamespacedName{Namespace: ns, Name: serviceAccount})}
			}
			c, err := client.New(cfg, client.Options{Scheme: manager.Scheme()})
			must(b, err)
			objs := func(release int) []*unstructured.Unstructured {
				out := make([]*unstructured.Unstructured, 0, tt.n)
				for i := range tt.n {
					out = append(out, benchSettings("app", i, release))
				}
				return out
			}
			benchApplyAll(b, c, ns, objs(0))
			release := 0
			for b.Loop() {
				b.StopTimer()
				release++
				next := objs(release)
				b.StartTimer()
				benchApplyAll(b, c, ns, next)
			}
			b.ReportMetric(float64(tt.n)*float64(b.N)/b.Elapsed().Seconds(), "objects/s")
			live := &corev1.ConfigMap{}
			err = admin.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "app-settings-000"}, live)
			if err != nil || live.Data["release"] != strconv.Itoa(release) {
				b.Fatalf("ConfigMap %s/app-settings-000 after the applies: %v, release %q, want %d", ns, err, live.Data["release"], release)
			}
		})
	}
}
