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
//
// The limits are the Deployment's: with n replicas serving, each bucket
// holds burst/n tokens (at least one) refilled at perSecond/n, so that the
// replicas together admit no more than burst and perSecond.
type keyedLimiter struct {
	perSecond float64
	burst     int
	max       int
	// replicas is the number of replicas serving, at least 1.
	replicas func() int

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
}

type bucket struct {
	limiter *rate.Limiter
	last    time.Time
	// replicas is the count the bucket's share was computed for.
	replicas int
}

func newKeyedLimiter(burst int, perSecond float64, max int, replicas func() int) *keyedLimiter {
	return &keyedLimiter{
		perSecond: perSecond,
		burst:     burst,
		max:       max,
		replicas:  replicas,
		buckets:   map[string]*bucket{},
	}
}

// share is this replica's burst and refill rate with n replicas, and how
// long its bucket takes to refill from empty.
func (l *keyedLimiter) share(n int) (burst int, refill rate.Limit, idle time.Duration) {
	burst = max(l.burst/n, 1)
	perSecond := l.perSecond / float64(n)
	return burst, rate.Limit(perSecond), time.Duration(float64(burst) / perSecond * float64(time.Second))
}

// allow takes a token from key's bucket at now.
func (l *keyedLimiter) allow(key string, now time.Time) bool {
	n := max(l.replicas(), 1)
	burst, refill, idle := l.share(n)
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.lastSweep) >= idle {
		l.sweep(now, idle)
	}
	b, ok := l.buckets[key]
	switch {
	case !ok:
		if len(l.buckets) >= l.max {
			return false
		}
		b = &bucket{limiter: rate.NewLimiter(refill, burst), replicas: n}
		l.buckets[key] = b
	case b.replicas != n:
		// A replica came or went: the bucket keeps its tokens, up to its
		// new share.
		b.limiter.SetLimitAt(now, refill)
		b.limiter.SetBurstAt(now, burst)
		b.replicas = n
	}
	b.last = now
	return b.limiter.AllowN(now, 1)
}

// sweep forgets the buckets that have refilled.
func (l *keyedLimiter) sweep(now time.Time, idle time.Duration) {
	l.lastSweep = now
	for k, b := range l.buckets {
		if now.Sub(b.last) >= idle {
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
