package memory

import (
	"bytes"
	"testing"
)

// TestDesiredStates_KeepsRecentStatesWithinItsBound: entries are found by
// Secret and digest, the least recently used go first once the bound is
// passed, and a state larger than the bound is not kept.
func TestDesiredStates_KeepsRecentStatesWithinItsBound(t *testing.T) {
	third := desiredStatesBytes / 3
	key := func(digest string) DesiredKey {
		return DesiredKey{Namespace: "team", Secret: "shop-abc", Digest: digest}
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
		{name: "larger than the bound not kept", puts: []string{"a", "big"}, sizes: []int{10, desiredStatesBytes + 1},
			present: []string{"a"}, absent: []string{"big"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c DesiredStates
			for i, d := range tc.puts {
				if d == "d" && tc.touch != "" {
					c.Get(key(tc.touch))
				}
				c.Put(key(d), bytes.Repeat([]byte(d[:1]), tc.sizes[i]))
			}
			for _, d := range tc.present {
				if got := c.Get(key(d)); len(got) == 0 || got[0] != d[0] {
					t.Errorf("state %s not found", d)
				}
			}
			for _, d := range tc.absent {
				if got := c.Get(key(d)); got != nil {
					t.Errorf("state %s kept, want it gone", d)
				}
			}
			if c.size > desiredStatesBytes {
				t.Errorf("cache holds %d bytes, bound %d", c.size, desiredStatesBytes)
			}
		})
	}
}
