package receiver

import (
	"net/http"
	"testing"
	"time"
)

// TestReceiver_RateLimitsAddressThenRepository freezes the clock so no
// bucket refills: one address gets 50 requests before authentication is
// even checked and the 51st is 429; once that address has tokens again, one
// Repository gets 10 authenticated requests and the 11th, push or pull
// request event, is 429; the image endpoint has its own buckets. Every
// response is counted exactly once under its result.
func TestReceiver_RateLimitsAddressThenRepository(t *testing.T) {
	clock := time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	f := start(t, fixtureOptions{now: now})
	f.secret("hook", "s3cret")
	f.repository("platform", "https://github.com/acme/platform", "hook")
	f.imagePolicy("api", "hook")

	statuses := map[int]int{}
	send := func(path string, header map[string]string) int {
		got := f.post(path, header, []byte("{}"))
		statuses[got.status]++
		return got.status
	}
	unknown := "/hooks/" + f.ns + "/nope"
	for i := 1; i <= 50; i++ {
		if s := send(unknown, nil); s != http.StatusUnauthorized {
			t.Fatalf("request %d of the burst: %d, want 401", i, s)
		}
	}
	if s := send(unknown, nil); s != http.StatusTooManyRequests {
		t.Fatalf("request 51 of the burst: %d, want 429", s)
	}
	ping := map[string]string{"X-GitHub-Event": "ping", "X-Hub-Signature-256": sign([]byte("{}"), "s3cret")}
	if s := send("/hooks/"+f.ns+"/platform", ping); s != http.StatusTooManyRequests {
		t.Fatalf("a signed request from the exhausted address: %d, want 429 before authentication", s)
	}
	// The image endpoint's buckets are its own.
	bearer := map[string]string{"Authorization": "Bearer s3cret"}
	if s := send("/hooks/imagepolicies/"+f.ns+"/api", bearer); s != http.StatusAccepted {
		t.Fatalf("image request from the address the push endpoint limits: %d, want 202", s)
	}

	// Ten seconds refill the address's 50 tokens.
	clock = clock.Add(10 * time.Second)
	for i := 1; i <= 10; i++ {
		if s := send("/hooks/"+f.ns+"/platform", ping); s != http.StatusOK {
			t.Fatalf("authenticated request %d: %d, want 200", i, s)
		}
	}
	if s := send("/hooks/"+f.ns+"/platform", ping); s != http.StatusTooManyRequests {
		t.Fatalf("authenticated request 11: %d, want 429", s)
	}
	// Pull request events take from the same bucket as pushes.
	pullRequest := map[string]string{"X-GitHub-Event": "pull_request", "X-Hub-Signature-256": sign([]byte("{}"), "s3cret")}
	if s := send("/hooks/"+f.ns+"/platform", pullRequest); s != http.StatusTooManyRequests {
		t.Fatalf("a pull request event after 10 requests: %d, want 429", s)
	}
	// The ImagePolicy's bucket refilled meanwhile too.
	for i := 1; i <= 10; i++ {
		if s := send("/hooks/imagepolicies/"+f.ns+"/api", bearer); s != http.StatusAccepted {
			t.Fatalf("image request %d for one ImagePolicy: %d, want 202", i, s)
		}
	}
	if s := send("/hooks/imagepolicies/"+f.ns+"/api", bearer); s != http.StatusTooManyRequests {
		t.Fatalf("image request 11 for one ImagePolicy: %d, want 429", s)
	}
	// One second refills one token of the Repository's bucket.
	clock = clock.Add(time.Second)
	if s := send("/hooks/"+f.ns+"/platform", ping); s != http.StatusOK {
		t.Fatalf("a second later: %d, want 200", s)
	}

	want := map[string]int{
		"unauthorized": statuses[http.StatusUnauthorized],
		"rate_limited": statuses[http.StatusTooManyRequests],
		"ping":         statuses[http.StatusOK],
		"accepted":     statuses[http.StatusAccepted],
	}
	if want["unauthorized"] != 50 || want["rate_limited"] != 5 || want["ping"] != 11 || want["accepted"] != 11 {
		t.Fatalf("responses by status %v", statuses)
	}
	got := f.counts()
	for r, n := range got {
		if n != want[r] {
			t.Errorf("kuvryn_sync_webhook_receiver_requests_total{result=%q} = %d, want %d (all: %v)", r, n, want[r], got)
		}
	}
}
