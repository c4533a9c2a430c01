package revision

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// appliedWaves remembers, per Application, the waves this process has
// applied in the attempt under way. A wave is recorded Applying before it
// is applied, in the same write as its inventory, so a wave found Applying
// may never have been applied: by a controller that stopped in between, or
// by this one after the apply failed. Such a wave is applied again, which
// Server-Side Apply of unchanged objects makes a no-op; a wave this process
// applied is only watched.
type appliedWaves struct {
	mu    sync.Mutex
	byApp map[types.NamespacedName]wavesOfAttempt
}

// wavesOfAttempt are the waves applied in one attempt at one Revision.
type wavesOfAttempt struct {
	revision string
	attempt  int32
	waves    map[int32]bool
}

// of reports whether these are the waves of ro's attempt.
func (w wavesOfAttempt) of(ro *rollout) bool {
	return w.revision == ro.rev.Name && w.attempt == ro.rev.Status.Attempt
}

// add remembers that wave w of ro's attempt has been applied.
func (a *appliedWaves) add(ro *rollout, w int32) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.byApp == nil {
		a.byApp = map[types.NamespacedName]wavesOfAttempt{}
	}
	e := a.byApp[ro.key()]
	if !e.of(ro) {
		e = wavesOfAttempt{revision: ro.rev.Name, attempt: ro.rev.Status.Attempt, waves: map[int32]bool{}}
	}
	e.waves[w] = true
	a.byApp[ro.key()] = e
}

// has reports whether this process applied wave w of ro's attempt.
func (a *appliedWaves) has(ro *rollout, w int32) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	e := a.byApp[ro.key()]
	return e.of(ro) && e.waves[w]
}

// forget drops what is remembered of an Application: its attempt is over,
// or it is gone.
func (a *appliedWaves) forget(app types.NamespacedName) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.byApp, app)
}
