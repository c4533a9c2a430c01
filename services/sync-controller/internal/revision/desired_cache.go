package revision

import (
	"container/list"
	"sync"
)

// desiredCacheBytes bounds the desired states kept by desiredCache. At 1000
// Applications of a few objects each they take about 3 MB; reading them
// from the API server on every pass was 3 GETs of a Secret per Application
// in a rollout (docs/benchmarks.md).
const desiredCacheBytes = 16 << 20

// desiredKey names a desired state: the Secret holding it and the digest
// the Revision pins, so a cached entry is the content that was verified
// against that digest and cannot go stale.
type desiredKey struct {
	namespace, secret, digest string
}

// desiredCache keeps the verified encoded desired states of recent
// Revisions, least recently used first out. The zero value is ready.
type desiredCache struct {
	mu      sync.Mutex
	size    int
	order   list.List
	entries map[desiredKey]*list.Element
}

type desiredEntry struct {
	key  desiredKey
	data []byte
}

// get returns the cached data for key, or nil.
func (c *desiredCache) get(key desiredKey) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return nil
	}
	c.order.MoveToFront(e)
	return e.Value.(*desiredEntry).data
}

// put keeps data for key, dropping the least recently used entries beyond
// desiredCacheBytes. Data larger than the bound is not kept.
func (c *desiredCache) put(key desiredKey, data []byte) {
	if len(data) > desiredCacheBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[desiredKey]*list.Element{}
	}
	if _, ok := c.entries[key]; ok {
		return
	}
	c.entries[key] = c.order.PushFront(&desiredEntry{key: key, data: data})
	c.size += len(data)
	for c.size > desiredCacheBytes {
		oldest := c.order.Back()
		entry := oldest.Value.(*desiredEntry)
		c.order.Remove(oldest)
		delete(c.entries, entry.key)
		c.size -= len(entry.data)
	}
}
