package receiver

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"
)

// BenchmarkReceiver_UnauthorizedExistingVsUnknown sends, per iteration, 1000
// requests with a bad signature over one keep-alive connection, alternating
// (ABBA, so neither goes first more often) between a Repository that exists
// and one that does not, and reports each one's median and p90 latency,
// from sending to the last byte of the answer, and the medians'
// difference. The receiver's clock moves a second at each reading, so no
// bucket runs dry: this measures authentication, not the limiter. Run it
// with
//
//	go test ./internal/receiver -run '^$' -bench BenchmarkReceiver_UnauthorizedExistingVsUnknown -benchtime 1x
func BenchmarkReceiver_UnauthorizedExistingVsUnknown(b *testing.B) {
	var mu sync.Mutex
	clock := time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)
	f := start(b, fixtureOptions{now: func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(time.Second)
		return clock
	}})
	f.secret("hook", "s3cret")
	f.repository("platform", "https://github.com/acme/platform", "hook")
	body := githubPush("acme/platform")
	header := map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": sign(body, "guess")}
	paths := [2]string{"/hooks/" + f.ns + "/platform", "/hooks/" + f.ns + "/nope"}
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}

	var latencies [2][]time.Duration
	b.ResetTimer()
	for range b.N {
		for i := range 1000 {
			// A B B A A B B A ...
			which := (i + i/2) % 2
			req, err := http.NewRequest(http.MethodPost, f.url+paths[which], bytes.NewReader(body))
			must(b, err)
			for k, v := range header {
				req.Header.Set(k, v)
			}
			sent := time.Now()
			resp, err := c.Do(req)
			must(b, err)
			_, err = io.Copy(io.Discard, resp.Body)
			must(b, err)
			took := time.Since(sent)
			must(b, resp.Body.Close())
			if resp.StatusCode != http.StatusUnauthorized {
				b.Fatalf("%s: %d, want 401", paths[which], resp.StatusCode)
			}
			latencies[which] = append(latencies[which], took)
		}
	}
	b.StopTimer()
	var p50, p90 [2]time.Duration
	for w := range latencies {
		slices.Sort(latencies[w])
		p50[w], p90[w] = nearestRank(latencies[w], 50), nearestRank(latencies[w], 90)
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(p50[0]), "existing-p50-ms")
	b.ReportMetric(ms(p90[0]), "existing-p90-ms")
	b.ReportMetric(ms(p50[1]), "unknown-p50-ms")
	b.ReportMetric(ms(p90[1]), "unknown-p90-ms")
	b.ReportMetric(ms(p50[0]-p50[1]), "p50-diff-ms")
	b.Logf("bad signature, %d requests each: existing Repository p50 %s p90 %s; unknown Repository p50 %s p90 %s",
		len(latencies[0]), p50[0], p90[0], p50[1], p90[1])
}

// nearestRank is the p-th percentile of sorted, nearest rank.
func nearestRank(sorted []time.Duration, p int) time.Duration {
	return sorted[max((len(sorted)*p+99)/100-1, 0)]
}
