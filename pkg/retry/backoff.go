// Package retry spaces out new attempts at work that failed for a reason
// that may heal by itself (a Git server, chart repository or image registry
// that is down, a credentials Secret not created yet),
// so a failure is retried within seconds and not only at the next poll.
package retry

import (
	"sync"
	"time"
)

// DefaultInitial is the first delay after a failure.
const DefaultInitial = 5 * time.Second

// Backoff counts consecutive failures per key and doubles the delay with
// each, from Initial up to the cap the caller passes (its poll interval).
// The counts live in memory: after a restart the first retry comes soon
// again, which is what a restart should do.
type Backoff struct {
	// Initial is the first delay; zero means DefaultInitial.
	Initial time.Duration

	mu       sync.Mutex
	failures map[string]int
}

// Failed records a failure of key and returns how long to wait before the
// next attempt: Initial, doubled for each earlier failure in a row, never
// more than max (when max is positive).
func (b *Backoff) Failed(key string, max time.Duration) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.failures == nil {
		b.failures = map[string]int{}
	}
	n := b.failures[key]
	b.failures[key] = n + 1
	d := b.initial()
	for ; n > 0 && (max <= 0 || d < max); n-- {
		d *= 2
	}
	if max > 0 && d > max {
		d = max
	}
	return d
}

// Succeeded forgets key's failures, so its next failure waits Initial again.
func (b *Backoff) Succeeded(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.failures, key)
}

func (b *Backoff) initial() time.Duration {
	if b.Initial <= 0 {
		return DefaultInitial
	}
	return b.Initial
}
