package desiredstate

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestEncode_ReusedWritersGiveTheSameBytes: the gzip writers are reused, so
// an encode must not carry anything over from the one before, even when
// many run at once: the same objects always give the same Secret data.
func TestEncode_ReusedWritersGiveTheSameBytes(t *testing.T) {
	states := make([][]*unstructured.Unstructured, 8)
	for i := range states {
		for j := range i * 50 {
			o := &unstructured.Unstructured{}
			o.SetAPIVersion("v1")
			o.SetKind("ConfigMap")
			o.SetNamespace("shop")
			o.SetName(fmt.Sprintf("cm-%d", j))
			o.Object["data"] = map[string]any{"state": fmt.Sprint(i), "filler": fmt.Sprintf("%0*d", j*10, j)}
			states[i] = append(states[i], o)
		}
	}
	first := make([][]byte, len(states))
	for i, objs := range states {
		data, _, err := Encode(objs)
		if err != nil {
			t.Fatal(err)
		}
		first[i] = data
	}
	var wg sync.WaitGroup
	for range 4 {
		for i, objs := range states {
			wg.Go(func() {
				data, _, err := Encode(objs)
				if err != nil {
					t.Error(err)
					return
				}
				if !bytes.Equal(data, first[i]) {
					t.Errorf("state %d encoded to %d bytes, first to %d: reused writers changed the output", i, len(data), len(first[i]))
				}
				if back, err := Decode(data); err != nil || len(back) != len(objs) {
					t.Errorf("state %d: Decode() = %d objects, %v, want %d", i, len(back), err, len(objs))
				}
			})
		}
	}
	wg.Wait()
}
