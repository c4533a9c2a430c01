package v1alpha1

import (
	"testing"

	"k8s.io/apimachinery/pkg/labels"
)

func TestShardSelector_DefaultShardIsTheUnlabelledObjects(t *testing.T) {
	for _, tc := range []struct {
		shard  string
		labels map[string]string
		want   bool
	}{
		{"", nil, true},
		{"", map[string]string{ShardLabel: "a"}, false},
		{"", map[string]string{ShardLabel: ""}, false},
		{"a", map[string]string{ShardLabel: "a"}, true},
		{"a", map[string]string{ShardLabel: "b"}, false},
		{"a", nil, false},
		{"not a label value!", map[string]string{ShardLabel: "a"}, false},
	} {
		if got := ShardSelector(tc.shard).Matches(labels.Set(tc.labels)); got != tc.want {
			t.Errorf("shard %q, labels %v: matches %v, want %v", tc.shard, tc.labels, got, tc.want)
		}
	}
}
