package v1alpha1

import "testing"

func TestParseInventoryEntry_ReadsEveryPartAndRefusesMalformedEntries(t *testing.T) {
	tests := []struct {
		entry   string
		want    ObjectRef
		wantErr bool
	}{
		{entry: "shop_web_apps_Deployment_v1", want: ObjectRef{Namespace: "shop", Name: "web", Group: "apps", Kind: "Deployment", Version: "v1"}},
		{entry: "shop_settings__ConfigMap_v1", want: ObjectRef{Namespace: "shop", Name: "settings", Kind: "ConfigMap", Version: "v1"}},
		{entry: "_shop__Namespace_v1", want: ObjectRef{Name: "shop", Kind: "Namespace", Version: "v1"}},
		{entry: "", wantErr: true},
		{entry: "shop_web_apps_Deployment", wantErr: true},
		{entry: "shop__apps_Deployment_v1", wantErr: true},
		{entry: "shop_web_apps__v1", wantErr: true},
		{entry: "shop_web_apps_Deployment_", wantErr: true},
		{entry: "a_b_c_d_e_f", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.entry, func(t *testing.T) {
			got, err := ParseInventoryEntry(tc.entry)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Fatalf("ParseInventoryEntry(%q) = %+v, %v; want %+v, error %v", tc.entry, got, err, tc.want, tc.wantErr)
			}
			if err == nil && InventoryEntry(got) != tc.entry {
				t.Errorf("InventoryEntry(%+v) = %q, want %q back", got, InventoryEntry(got), tc.entry)
			}
		})
	}
}

func FuzzParseInventoryEntry(f *testing.F) {
	for _, seed := range []string{"shop_web_apps_Deployment_v1", "_shop__Namespace_v1", "", "____", "a_b_c_d_e_f"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, entry string) {
		ref, err := ParseInventoryEntry(entry)
		if err != nil {
			return
		}
		if InventoryEntry(ref) != entry || ref.Name == "" || ref.Kind == "" || ref.Version == "" {
			t.Errorf("%q parsed into %+v", entry, ref)
		}
	})
}
