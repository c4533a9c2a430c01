package revision

import (
	"bytes"
	"testing"
)

// TestDesiredCache_KeepsRecentStatesWithinItsBound: entries are found by
// Secret and digest, the least recently used go first once the bound is
// passed, and a state larger than the bound is not kept.
func TestDesiredCache_KeepsRecentStatesWithinItsBound(t *testing.T) {
	third := desiredCacheBytes / 3
	key := func(digest string) desiredKey {
		return desiredKey{namespace: "team", secret: "shop-abc", digest: digest}
	}
	for _, tc := range []struct {
		name    string
		puts    []string
		sizes   []int
		touch   string
		present []string
		absent  []string
	}{
		{name: "found by digest", puts: []string{"a"}, sizes: []int{10}, present: []string{"a"}, absent: []string{"b"}},
		{name: "oldest evicted past the bound", puts: []string{"a", "b", "c", "d"}, sizes: []int{third, third, third, third},
			present: []string{"b", "c", "d"}, absent: []string{"a"}},
		{name: "a state read again stays", puts: []string{"a", "b", "c", "d"}, sizes: []int{third, third, third, third}, touch: "a",
			present: []string{"a", "c", "d"}, absent: []string{"b"}},
		{name: "larger than the bound not kept", puts: []string{"a", "big"}, sizes: []int{10, desiredCacheBytes + 1},
			present: []string{"a"}, absent: []string{"big"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c desiredCache
			for i, d := range tc.puts {
				if d == "d" && tc.touch != "" {
					c.get(key(tc.touch))
				}
				c.put(key(d), bytes.Repeat([]byte(d[:1]), tc.sizes[i]))
			}
			for _, d := range tc.present {
				if got := c.get(key(d)); len(got) == 0 || got[0] != d[0] {
					t.Errorf("state %s not found", d)
				}
			}
			for _, d := range tc.absent {
				if got := c.get(key(d)); got != nil {
					t.Errorf("state %s kept, want it gone", d)
				}
			}
			if c.size > desiredCacheBytes {
				t.Errorf("cache holds %d bytes, bound %d", c.size, desiredCacheBytes)
			}
		})
	}
}
