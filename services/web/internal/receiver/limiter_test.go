package receiver

import (
	"fmt"
	"testing"
	"time"
)

// TestKeyedLimiter_BurstRefillAndBoundedKeys drives a limiter with a fake
// clock: with n replicas serving, a key gets its share of the burst (at
// least one request), then one token per n refill intervals; keys beyond
// the bound are refused rather than stored while the others are in use, and
// idle keys are forgotten so new ones get in.
func TestKeyedLimiter_BurstRefillAndBoundedKeys(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)
	cases := []struct {
		name      string
		burst     int
		perSecond float64
		replicas  int
		// share is the burst of one replica.
		share int
	}{
		{"per address", addressBurst, addressPerSecond, 1, 50},
		{"per object", objectBurst, objectPerSecond, 1, 10},
		{"per address, 2 replicas", addressBurst, addressPerSecond, 2, 25},
		{"per object, 3 replicas", objectBurst, objectPerSecond, 3, 3},
		{"per object, more replicas than its burst", objectBurst, objectPerSecond, 11, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := newKeyedLimiter(c.burst, c.perSecond, 100, func() int { return c.replicas })
			for i := 1; i <= c.share; i++ {
				if !l.allow("a", t0) {
					t.Fatalf("request %d of the burst refused", i)
				}
			}
			if l.allow("a", t0) {
				t.Fatalf("request %d allowed", c.share+1)
			}
			step := time.Duration(float64(time.Second) / c.perSecond * float64(c.replicas))
			if l.allow("a", t0.Add(step-time.Millisecond)) {
				t.Fatalf("a request allowed before %s", step)
			}
			if !l.allow("a", t0.Add(step)) || l.allow("a", t0.Add(step)) {
				t.Fatalf("after %s exactly one more request should pass", step)
			}

			for i := 0; i < 99; i++ {
				if !l.allow(fmt.Sprint("flood-", i), t0.Add(step)) {
					t.Fatalf("key %d of 100 refused", i+2)
				}
			}
			if l.allow("one-too-many", t0.Add(step)) {
				t.Fatal("a key beyond the bound was allowed")
			}
			if n := l.size(); n != 100 {
				t.Fatalf("%d keys held, want the bound 100", n)
			}
			if l.allow("a", t0.Add(step)) {
				t.Fatal("an existing key's empty bucket was refilled by the flood")
			}

			// Once every bucket has had time to refill, the keys are forgotten.
			_, _, idle := l.share(c.replicas)
			later := t0.Add(step + idle)
			if !l.allow("new", later) {
				t.Fatal("a new key was refused after the others went idle")
			}
			if n := l.size(); n != 1 {
				t.Fatalf("%d keys held after the sweep, want 1", n)
			}
		})
	}
}

// TestKeyedLimiter_ShareFollowsTheReplicaCount changes the number of
// replicas under a key's bucket: with a second replica it refills at half
// the rate up to half the burst, and once that is gone again it refills to
// the whole burst.
func TestKeyedLimiter_ShareFollowsTheReplicaCount(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)
	replicas := 1
	l := newKeyedLimiter(addressBurst, addressPerSecond, 100, func() int { return replicas })
	allowed := func(at time.Time, tries int) int {
		n := 0
		for range tries {
			if l.allow("a", at) {
				n++
			}
		}
		return n
	}
	steps := []struct {
		name     string
		replicas int
		at       time.Duration
		want     int
	}{
		{"one replica: the whole burst", 1, 0, 50},
		{"a second replica: what refilled alone is kept", 2, 2 * time.Second, 10},
		{"two replicas: half the refill", 2, 4 * time.Second, 5},
		{"two replicas, idle long enough: half the burst", 2, time.Minute, 25},
		{"one again, idle long enough: the whole burst", 1, 2 * time.Minute, 50},
	}
	for _, s := range steps {
		replicas = s.replicas
		if got := allowed(t0.Add(s.at), 100); got != s.want {
			t.Fatalf("%s: %d allowed, want %d", s.name, got, s.want)
		}
	}
}
