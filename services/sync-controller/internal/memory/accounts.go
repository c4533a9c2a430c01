package memory

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Accounts remembers when service accounts were last found to exist, so
// that one is not read on every reconcile. The zero value is ready.
type Accounts struct {
	seen sync.Map
}

// FoundWithin reports whether sa was found to exist less than d before now.
func (a *Accounts) FoundWithin(sa types.NamespacedName, now time.Time, d time.Duration) bool {
	seen, ok := a.seen.Load(sa)
	return ok && now.Sub(seen.(time.Time)) < d
}

// Found notes that sa was found to exist at now.
func (a *Accounts) Found(sa types.NamespacedName, now time.Time) {
	a.seen.Store(sa, now)
}

// Forget drops sa, once reading it failed.
func (a *Accounts) Forget(sa types.NamespacedName) {
	a.seen.Delete(sa)
}
