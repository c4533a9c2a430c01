package scan

import (
	"sync"
	"testing"
	"time"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	testregistry "github.com/kuvryn/kuvryn-sync/pkg/testkit/registry"
)

func TestScan_RateLimitsEachRegistryHost(t *testing.T) {
	const (
		qps      = 10
		burst    = 2
		policies = 6
	)
	busy := testregistry.Start(t, testregistry.Options{})
	other := testregistry.Start(t, testregistry.Options{})
	busy.Push(t, "acme/api", "1.0.0", "1.1.0")
	other.Push(t, "acme/web", "1.0.0")
	busy.Requests.Store(0)
	other.Requests.Store(0)

	s := New(Options{QPS: qps, Burst: burst})
	spec := func(r *testregistry.Registry, repo string) syncv1.ImagePolicySpec {
		return syncv1.ImagePolicySpec{Image: r.Host() + "/" + repo, Policy: semverPolicy("1.x")}
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, policies)
	for range policies {
		wg.Go(func() {
			_, err := s.Scan(t.Context(), spec(busy, "acme/api"), nil)
			errs <- err
		})
	}
	// While the burst waits on the busy host, another host is not held back.
	time.Sleep(200 * time.Millisecond)
	otherStart := time.Now()
	if _, err := s.Scan(t.Context(), spec(other, "acme/web"), nil); err != nil {
		t.Fatal(err)
	}
	otherTook := time.Since(otherStart)
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}

	n := busy.Requests.Load()
	if n < 3*policies {
		t.Fatalf("busy registry saw %d requests, want at least %d (ping, tags, manifest per policy)", n, 3*policies)
	}
	// A token bucket admits burst requests at once and qps a second after.
	minElapsed := time.Duration(float64(n-burst) / qps * float64(time.Second))
	if elapsed < minElapsed*9/10 {
		t.Errorf("%d requests to one host took %v; the limit of %d/s after a burst of %d allows no less than %v", n, elapsed, qps, burst, minElapsed)
	}
	if otherTook > minElapsed/2 {
		t.Errorf("a scan of another host took %v while the busy host was limited (%v)", otherTook, minElapsed)
	}
	t.Logf("%d requests to the busy host in %v; other host scanned in %v with %d requests", n, elapsed, otherTook, other.Requests.Load())
}
