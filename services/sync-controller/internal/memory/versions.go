package memory

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
)

// Versions remembers the resourceVersion last read or written by this
// process of each Application and Revision, so that a cached copy can be
// told fresh (at least as new) or stale. The zero value is ready.
type Versions struct {
	seen sync.Map
}

// Key names an Application or a Revision.
type Key struct {
	Revision bool
	Name     types.NamespacedName
}

// Seen returns the version last seen of k, if any.
func (v *Versions) Seen(k Key) (string, bool) {
	rv, ok := v.seen.Load(k)
	if !ok {
		return "", false
	}
	return rv.(string), true
}

// Saw notes that version rv of k was read or produced by a write.
func (v *Versions) Saw(k Key, rv string) {
	v.seen.Store(k, rv)
}

// Forget drops what was seen of k, once it is deleted.
func (v *Versions) Forget(k Key) {
	v.seen.Delete(k)
}

// AtLeast tells whether resourceVersion a is as new as b or newer, as the
// API server orders versions of one resource; a version that is not well
// formed is as new only as itself.
func AtLeast(a, b string) bool {
	c, err := resourceversion.CompareResourceVersion(a, b)
	if err != nil {
		return a == b
	}
	return c >= 0
}
