package revision

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/planner"
)

func TestNameObjects_NamesAtMostFiveAndCountsTheRest(t *testing.T) {
	var objs []*unstructured.Unstructured
	for i := range 7 {
		objs = append(objs, object(t, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d, namespace: shop}\n", i)))
	}
	tests := []struct {
		n    int
		want string
	}{
		{1, "ConfigMap shop/c0"},
		{5, "ConfigMap shop/c0, ConfigMap shop/c1, ConfigMap shop/c2, ConfigMap shop/c3, ConfigMap shop/c4"},
		{7, "ConfigMap shop/c0, ConfigMap shop/c1, ConfigMap shop/c2, ConfigMap shop/c3, ConfigMap shop/c4 and 2 more"},
	}
	for _, tt := range tests {
		if got := planner.NameObjects(objs[:tt.n]); got != tt.want {
			t.Errorf("planner.NameObjects(%d objects) = %q, want %q", tt.n, got, tt.want)
		}
	}
}
