package memory

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// TestAccounts_TrustsAFoundAccountForTheRecheckTimeOnly: a service account
// found is trusted for d, and not once forgotten or never found.
func TestAccounts_TrustsAFoundAccountForTheRecheckTimeOnly(t *testing.T) {
	deployer := types.NamespacedName{Namespace: "team", Name: "deployer"}
	found := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		forget bool
		ask    types.NamespacedName
		after  time.Duration
		want   bool
	}{
		{name: "within the recheck time", ask: deployer, after: 59 * time.Second, want: true},
		{name: "at the recheck time", ask: deployer, after: time.Minute, want: false},
		{name: "forgotten", forget: true, ask: deployer, after: time.Second, want: false},
		{name: "never found", ask: types.NamespacedName{Namespace: "team", Name: "other"}, after: time.Second, want: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a Accounts
			a.Found(deployer, found)
			if tc.forget {
				a.Forget(deployer)
			}
			if got := a.FoundWithin(tc.ask, found.Add(tc.after), time.Minute); got != tc.want {
				t.Errorf("FoundWithin(%s, +%s) = %t, want %t", tc.ask, tc.after, got, tc.want)
			}
		})
	}
}
