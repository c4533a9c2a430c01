package receiver

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// keyedLimiter is a token bucket per key (a remote address, a Repository)
// holding at most max keys. A key unused for as long as its bucket takes to
// refill is forgotten, which loses nothing: a new bucket starts full too.
// While max keys are all in use, a new key is refused, so a flood from many
// addresses costs bounded memory and cannot reset anyone's bucket.
type keyedLimiter struct {
	refill rate.Limit
	burst  int
	max    int
	// idle is how long a bucket takes to refill from empty.
	idle time.Duration

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
}

type bucket struct {
	limiter *rate.Limiter
	last    time.Time
}

func newKeyedLimiter(burst int, perSecond float64, max int) *keyedLimiter {
	return &keyedLimiter{
		refill:  rate.Limit(perSecond),
		burst:   burst,
		max:     max,
		idle:    time.Duration(float64(burst) / perSecond * float64(time.Second)),
		buckets: map[string]*bucket{},
	}
}

// allow takes a token from key's bucket at now.
func (l *keyedLimiter) allow(key string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.lastSweep) >= l.idle {
		l.sweep(now)
	}
	b, ok := l.buckets[key]
	if !ok {
		if len(l.buckets) >= l.max {
			return false
		}
		b = &bucket{limiter: rate.NewLimiter(l.refill, l.burst)}
		l.buckets[key] = b
	}
	b.last = now
	return b.limiter.AllowN(now, 1)
}

// sweep forgets the buckets that have refilled.
func (l *keyedLimiter) sweep(now time.Time) {
	l.lastSweep = now
	for k, b := range l.buckets {
		if now.Sub(b.last) >= l.idle {
			delete(l.buckets, k)
		}
	}
}

// size is the number of keys held.
func (l *keyedLimiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}
