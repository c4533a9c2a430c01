package scenarios_test

import (
	"fmt"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// benchRuns numbers the benchmark's runs: the testing package calls it more
// than once, and each run needs its own namespace.
var benchRuns atomic.Int32

// BenchmarkReceiver_PushToApplied measures, per iteration, a commit pushed
// to the Git server and GitHub's signed push event sent to the receiver,
// from the request until the Revision of that commit is applied (the
// Application Synced and Healthy on it), and prints p50 and p95. The
// Repository polls hourly, so only the webhook can start the fetch. The
// guide's target is p50 <= 1 s on an idle machine. Run it with
//
//	go test ./e2e/scenarios -run '^$' -bench BenchmarkReceiver_PushToApplied -benchtime 20x
func BenchmarkReceiver_PushToApplied(b *testing.B) {
	ns := fmt.Sprintf("bench-receiver-%d", benchRuns.Add(1))
	if err := env.Namespace(b.Context(), ns); err != nil {
		b.Fatal(err)
	}
	gitRepo := webhookRepository(b, ns, "platform", configMapApp("v0"))
	previous := waitApplied(b, ns, "web", "")
	latencies := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if _, err := gitRepo.Commit(map[string]string{"configmap.yaml": configMap(fmt.Sprint("v", i+1))}, "bump"); err != nil {
			b.Fatal(err)
		}
		// The Repository may take one authenticated request a second.
		time.Sleep(time.Second)
		b.StartTimer()
		start := time.Now()
		if status, body := pushHook(b, ns, "platform", gitRepo.URL()); status != http.StatusAccepted {
			b.Fatalf("signed push: %d %q", status, body)
		}
		previous = waitApplied(b, ns, "web", previous)
		latencies = append(latencies, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(latencies)
	p50, p95 := percentile(latencies, 50), percentile(latencies, 95)
	b.ReportMetric(p50.Seconds(), "p50-s")
	b.ReportMetric(p95.Seconds(), "p95-s")
	b.Logf("push -> applied over %d pushes: p50 %s, p95 %s, max %s", len(latencies),
		p50.Round(time.Millisecond), p95.Round(time.Millisecond), latencies[len(latencies)-1].Round(time.Millisecond))
}

// percentile of sorted durations, nearest rank.
func percentile(sorted []time.Duration, p int) time.Duration {
	i := (len(sorted)*p+99)/100 - 1
	return sorted[max(i, 0)]
}

// waitApplied polls every 10 ms until the Application deployed a Revision
// other than previous and is Synced and Healthy on it.
func waitApplied(tb testing.TB, ns, name, previous string) string {
	tb.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		var app syncv1.Application
		err := env.Client.Get(tb.Context(), client.ObjectKey{Namespace: ns, Name: name}, &app)
		if err == nil && app.Status.DeployedRevision != "" && app.Status.DeployedRevision != previous &&
			app.Status.DeployedRevision == app.Status.DesiredRevision &&
			app.Status.Sync == syncv1.SyncStateSynced && app.Status.Health == syncv1.HealthHealthy {
			return app.Status.DeployedRevision
		}
		if err := env.Exited(); err != nil {
			tb.Fatal(err)
		}
		if time.Now().After(deadline) {
			tb.Fatalf("Application %s/%s not applied on a new Revision within 3 minutes", ns, name)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
