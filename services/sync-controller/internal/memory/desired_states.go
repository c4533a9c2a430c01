package memory

import (
	"container/list"
	"sync"
)

// desiredStatesBytes bounds the desired states kept by DesiredStates. At 1000
// Applications of a few objects each they take about 3 MB; reading them
// from the API server on every pass was 3 GETs of a Secret per Application
// in a rollout (docs/benchmarks.md).
const desiredStatesBytes = 16 << 20

// DesiredKey names a desired state: the Secret holding it and the digest
// the Revision pins, so a kept entry is the content that was verified
// against that digest and cannot go stale.
type DesiredKey struct {
	Namespace, Secret, Digest string
}

// DesiredStates keeps the verified encoded desired states of recent
// Revisions, least recently used first out. The zero value is ready.
type DesiredStates struct {
	mu      sync.Mutex
	size    int
	order   list.List
	entries map[DesiredKey]*list.Element
}

type desiredState struct {
	key  DesiredKey
	data []byte
}

// Get returns the cached data for key, or nil.
func (c *DesiredStates) Get(key DesiredKey) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return nil
	}
	c.order.MoveToFront(e)
	return e.Value.(*desiredState).data
}

// Put keeps data for key, dropping the least recently used entries beyond
// desiredStatesBytes. Data larger than the bound is not kept.
func (c *DesiredStates) Put(key DesiredKey, data []byte) {
	if len(data) > desiredStatesBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[DesiredKey]*list.Element{}
	}
	if _, ok := c.entries[key]; ok {
		return
	}
	c.entries[key] = c.order.PushFront(&desiredState{key: key, data: data})
	c.size += len(data)
	for c.size > desiredStatesBytes {
		oldest := c.order.Back()
		entry := oldest.Value.(*desiredState)
		c.order.Remove(oldest)
		delete(c.entries, entry.key)
		c.size -= len(entry.data)
	}
}
