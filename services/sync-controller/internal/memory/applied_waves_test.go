package memory

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// TestAppliedWaves_RemembersWavesOfTheAttemptUnderWayOnly: a wave is
// remembered for the attempt that applied it, and a new attempt, another
// Revision or Forget starts from nothing.
func TestAppliedWaves_RemembersWavesOfTheAttemptUnderWayOnly(t *testing.T) {
	shop := types.NamespacedName{Namespace: "team", Name: "shop"}
	first := Attempt{Revision: "shop-abc", Number: 1}
	for _, tc := range []struct {
		name   string
		do     func(a *AppliedWaves)
		app    types.NamespacedName
		ask    Attempt
		wave   int32
		wanted bool
	}{
		{name: "the wave applied", app: shop, ask: first, wave: 0, wanted: true},
		{name: "another wave of the same attempt", app: shop, ask: first, wave: 1, wanted: false},
		{name: "the next attempt", app: shop, ask: Attempt{Revision: "shop-abc", Number: 2}, wave: 0, wanted: false},
		{name: "another Revision", app: shop, ask: Attempt{Revision: "shop-def", Number: 1}, wave: 0, wanted: false},
		{name: "another Application", app: types.NamespacedName{Namespace: "team", Name: "cart"}, ask: first, wave: 0, wanted: false},
		{name: "after Forget", do: func(a *AppliedWaves) { a.Forget(shop) }, app: shop, ask: first, wave: 0, wanted: false},
		{name: "a new attempt's wave replaces the old attempt's", do: func(a *AppliedWaves) {
			a.Add(shop, Attempt{Revision: "shop-abc", Number: 2}, 3)
		}, app: shop, ask: first, wave: 0, wanted: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a AppliedWaves
			a.Add(shop, first, 0)
			if tc.do != nil {
				tc.do(&a)
			}
			if got := a.Has(tc.app, tc.ask, tc.wave); got != tc.wanted {
				t.Errorf("Has(%s, %+v, %d) = %t, want %t", tc.app, tc.ask, tc.wave, got, tc.wanted)
			}
		})
	}
}
