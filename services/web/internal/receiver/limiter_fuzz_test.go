package receiver

import (
	"testing"
	"time"
)

// FuzzKeyedLimiter_KeysFromRequestsNeverExceedTheBurstOrTheKeyBound feeds
// the limiter keys taken from requests (addresses, Repository names) and
// replica counts: whatever they are, one instant admits at most a share of
// the burst per key, and the limiter never holds more than max keys.
func FuzzKeyedLimiter_KeysFromRequestsNeverExceedTheBurstOrTheKeyBound(f *testing.F) {
	f.Add("203.0.113.7", "payments/platform", uint8(1), uint8(12))
	f.Add("", "\x00", uint8(0), uint8(60))
	f.Add("[2001:db8::1]:443", "ns/"+string(make([]byte, 300)), uint8(3), uint8(255))
	f.Fuzz(func(t *testing.T, a, b string, replicas, requests uint8) {
		const burst, keys = 10, 2
		l := newKeyedLimiter(burst, 1, keys, func() int { return int(replicas) })
		now := time.Unix(1_700_000_000, 0)
		admitted := map[string]int{}
		for i := range int(requests) {
			key := a
			if i%2 == 1 {
				key = b
			}
			if l.allow(key, now) {
				admitted[key]++
			}
			if n := l.size(); n > keys {
				t.Fatalf("the limiter holds %d keys, more than %d", n, keys)
			}
		}
		share := burst / max(int(replicas), 1)
		for key, n := range admitted {
			if n > max(share, 1) {
				t.Fatalf("key %q admitted %d requests in one instant, more than the share %d of %d", key, n, share, burst)
			}
		}
	})
}
