package graph

import (
	"strings"
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

func TestParseInventoryEntry(t *testing.T) {
	tests := []struct {
		entry   string
		want    syncv1.ObjectRef
		wantErr bool
	}{
		{entry: "shop_web_apps_Deployment_v1", want: syncv1.ObjectRef{Namespace: "shop", Name: "web", Group: "apps", Kind: "Deployment", Version: "v1"}},
		{entry: "_shop__Namespace_v1", want: syncv1.ObjectRef{Name: "shop", Kind: "Namespace", Version: "v1"}},
		{entry: "shop_web_apps_Deployment", wantErr: true},
		{entry: "shop__apps_Deployment_v1", wantErr: true},
		{entry: "a_b_c_d_e_f", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.entry, func(t *testing.T) {
			got, err := ParseInventoryEntry(tc.entry)
			if (err != nil) != tc.wantErr || got.ObjectRef != tc.want {
				t.Errorf("ParseInventoryEntry(%q) = %+v, %v", tc.entry, got, err)
			}
		})
	}
}

func FuzzParseInventoryEntry(f *testing.F) {
	for _, seed := range []string{"shop_web_apps_Deployment_v1", "_shop__Namespace_v1", "", "____", "a_b_c_d_e_f"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, entry string) {
		root, err := ParseInventoryEntry(entry)
		if err != nil {
			return
		}
		back := strings.Join([]string{root.Namespace, root.Name, root.Group, root.Kind, root.Version}, "_")
		if back != entry || root.Name == "" || root.Kind == "" || root.Version == "" {
			t.Errorf("%q parsed into %+v", entry, root)
		}
	})
}
