package printers

import (
	"bytes"
	"strings"
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestPlan_ShowsWhichEntriesAreForced: the approver must see, before
// approving, which objects take fields from other field managers.
func TestPlan_ShowsWhichEntriesAreForced(t *testing.T) {
	tests := []struct {
		force bool
		want  string
	}{
		{true, "update (force)"},
		{false, "update"},
	}
	for _, tt := range tests {
		p := syncv1.Plan{Digest: digest1, Summary: syncv1.PlanSummary{Update: 1}, Entries: []syncv1.PlanEntry{{
			ObjectRef: syncv1.ObjectRef{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "settings"},
			Action:    syncv1.ActionUpdate, Force: tt.force,
		}}}
		var out bytes.Buffer
		if err := Plan(&out, "shop-1", p, Options{}); err != nil {
			t.Fatal(err)
		}
		row := ""
		for _, line := range strings.Split(out.String(), "\n") {
			if strings.Contains(line, "shop/settings") {
				row = line
			}
		}
		if !strings.HasPrefix(row, tt.want+" ") || (!tt.force && strings.Contains(row, "force")) {
			t.Errorf("force=%v: row %q, want it to start with %q", tt.force, row, tt.want)
		}
	}
}
