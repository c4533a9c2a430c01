package revision

import (
	"testing"

	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/planner"
)

func TestInventoryEntry_RoundTripsIdentityAndVersion(t *testing.T) {
	tests := []struct {
		name     string
		manifest string
		want     string
	}{
		{"core namespaced", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop}\n", "shop_settings__ConfigMap_v1"},
		{"grouped namespaced", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\n", "shop_web_apps_Deployment_v1"},
		{"cluster-scoped", "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: reader}\n", "_reader_rbac.authorization.k8s.io_ClusterRole_v1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := object(t, tt.manifest)
			entry := planner.InventoryEntry(obj)
			if entry != tt.want {
				t.Fatalf("planner.InventoryEntry() = %q, want %q", entry, tt.want)
			}
			back, err := planner.ParseInventoryEntry(entry)
			if err != nil {
				t.Fatalf("planner.ParseInventoryEntry(%q) error = %v", entry, err)
			}
			if planner.IDOf(back) != planner.IDOf(obj) || back.GroupVersionKind() != obj.GroupVersionKind() {
				t.Errorf("planner.ParseInventoryEntry(%q) = %v %v, want %v %v", entry, planner.IDOf(back), back.GroupVersionKind(), planner.IDOf(obj), obj.GroupVersionKind())
			}
		})
	}
}
