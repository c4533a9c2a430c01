package memory

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// AppliedWaves remembers, per Application, the waves this process has
// applied in the attempt under way. A wave is recorded Applying before it
// is applied, in the same write as its inventory, so a wave found Applying
// may never have been applied: by a controller that stopped in between, or
// by this one after the apply failed. Such a wave is applied again, which
// Server-Side Apply of unchanged objects makes a no-op; a wave this process
// applied is only watched. The zero value is ready.
type AppliedWaves struct {
	mu    sync.Mutex
	byApp map[types.NamespacedName]wavesOfAttempt
}

// Attempt names one attempt at one Revision.
type Attempt struct {
	Revision string
	Number   int32
}

// wavesOfAttempt are the waves applied in one attempt.
type wavesOfAttempt struct {
	attempt Attempt
	waves   map[int32]bool
}

// Add remembers that wave w of app's attempt has been applied.
func (a *AppliedWaves) Add(app types.NamespacedName, attempt Attempt, w int32) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.byApp == nil {
		a.byApp = map[types.NamespacedName]wavesOfAttempt{}
	}
	e := a.byApp[app]
	if e.attempt != attempt {
		e = wavesOfAttempt{attempt: attempt, waves: map[int32]bool{}}
	}
	e.waves[w] = true
	a.byApp[app] = e
}

// Has reports whether this process applied wave w of app's attempt.
func (a *AppliedWaves) Has(app types.NamespacedName, attempt Attempt, w int32) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	e := a.byApp[app]
	return e.attempt == attempt && e.waves[w]
}

// Forget drops what is remembered of an Application: its attempt is over,
// or it is gone.
func (a *AppliedWaves) Forget(app types.NamespacedName) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.byApp, app)
}
