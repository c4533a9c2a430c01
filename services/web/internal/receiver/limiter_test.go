package receiver

import (
	"fmt"
	"testing"
	"time"
)

// TestKeyedLimiter_BurstRefillAndBoundedKeys drives a limiter with a fake
// clock: a key gets its burst, then one token per refill interval; keys
// beyond the bound are refused rather than stored while the others are in
// use, and idle keys are forgotten so new ones get in.
func TestKeyedLimiter_BurstRefillAndBoundedKeys(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)
	cases := []struct {
		name      string
		burst     int
		perSecond float64
	}{
		{"per address", addressBurst, addressPerSecond},
		{"per object", objectBurst, objectPerSecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := newKeyedLimiter(c.burst, c.perSecond, 100)
			for i := 1; i <= c.burst; i++ {
				if !l.allow("a", t0) {
					t.Fatalf("request %d of the burst refused", i)
				}
			}
			if l.allow("a", t0) {
				t.Fatalf("request %d allowed", c.burst+1)
			}
			step := time.Duration(float64(time.Second) / c.perSecond)
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
			later := t0.Add(step + l.idle)
			if !l.allow("new", later) {
				t.Fatal("a new key was refused after the others went idle")
			}
			if n := l.size(); n != 1 {
				t.Fatalf("%d keys held after the sweep, want 1", n)
			}
		})
	}
}
