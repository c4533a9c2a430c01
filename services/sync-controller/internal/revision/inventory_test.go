package revision

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
			entry := inventoryEntry(obj)
			if entry != tt.want {
				t.Fatalf("inventoryEntry() = %q, want %q", entry, tt.want)
			}
			back, err := parseInventoryEntry(entry)
			if err != nil {
				t.Fatalf("parseInventoryEntry(%q) error = %v", entry, err)
			}
			if idOf(back) != idOf(obj) || back.GroupVersionKind() != obj.GroupVersionKind() {
				t.Errorf("parseInventoryEntry(%q) = %v %v, want %v %v", entry, idOf(back), back.GroupVersionKind(), idOf(obj), obj.GroupVersionKind())
			}
		})
	}
}

func TestParseInventoryEntry_RefusesMalformedEntries(t *testing.T) {
	for _, entry := range []string{"", "shop_settings_ConfigMap_v1", "shop__apps_Deployment_v1", "shop_web_apps__v1", "shop_web_apps_Deployment_", "a_b_c_d_e_f"} {
		if _, err := parseInventoryEntry(entry); err == nil {
			t.Errorf("parseInventoryEntry(%q) succeeded, want an error", entry)
		}
	}
}

func TestConflictMessage_NamesEveryManagerAndBoundsTheFields(t *testing.T) {
	cause := func(manager, field string) metav1.StatusCause {
		return metav1.StatusCause{Type: metav1.CauseTypeFieldManagerConflict, Message: fmt.Sprintf("conflict with %q using v1", manager), Field: field}
	}
	status := metav1.Status{Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{
		cause("kubectl-edit", ".data.a"), cause("kubectl-edit", ".data.b"), cause("kubectl-edit", ".data.c"),
		cause("kubectl-edit", ".data.d"), cause("helm", ".metadata.labels.team"),
		{Type: metav1.CauseTypeFieldValueInvalid, Message: "not a conflict", Field: ".spec"},
	}}}
	got := conflictMessage(objectID{Kind: "ConfigMap", Namespace: "shop", Name: "settings"}, status)
	for _, want := range []string{
		"ConfigMap shop/settings",
		`field manager "helm" owns .metadata.labels.team`,
		`field manager "kubectl-edit" owns .data.a, .data.b, .data.c and 1 more field(s)`,
		"does not force",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("conflictMessage() = %q, want it to contain %q", got, want)
		}
	}
	if strings.Contains(got, ".spec") {
		t.Errorf("conflictMessage() = %q names a cause that is not a conflict", got)
	}
}

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
		if got := nameObjects(objs[:tt.n]); got != tt.want {
			t.Errorf("nameObjects(%d objects) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestHookWaves_SplitsHooksIntoRunsOfOneWave(t *testing.T) {
	h := func(name, wave string) *unstructured.Unstructured {
		return object(t, fmt.Sprintf("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: %s\n  annotations: {sync.kuvryn.io/sync-wave: %q}\n", name, wave))
	}
	groups := hookWaves([]*unstructured.Unstructured{h("a", "-1"), h("b", "0"), h("c", "0"), h("d", "3")})
	var got []string
	for _, g := range groups {
		var names []string
		for _, obj := range g {
			names = append(names, obj.GetName())
		}
		got = append(got, strings.Join(names, "+"))
	}
	if want := "a|b+c|d"; strings.Join(got, "|") != want {
		t.Errorf("hookWaves() = %v, want %s", got, want)
	}
}
