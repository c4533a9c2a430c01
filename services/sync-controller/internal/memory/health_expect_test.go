package memory

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kuvryn/kuvryn-sync/pkg/desiredstate"
)

// A rollout about to read the health of what it applied is woken by any
// later change to those objects, even before the end of its pass records
// them: a Deployment observed in between no longer waits for the backstop.
func TestExpect_WakesTheRolloutOnChangesAfterItAsked(t *testing.T) {
	gvk := appsv1.SchemeGroupVersion.WithKind("Deployment")
	shop := types.NamespacedName{Namespace: "shop", Name: "web"}
	for _, tc := range []struct {
		name     string
		tracked  []string
		expected []string
		done     bool
		object   string
		want     bool
	}{
		{name: "a first rollout's Deployment, never tracked", expected: []string{"web"}, object: "web", want: true},
		{name: "an object tracked before, kept", tracked: []string{"cache"}, expected: []string{"web"}, object: "cache", want: true},
		{name: "another Application's Deployment", expected: []string{"web"}, object: "api", want: false},
		{name: "once the rollout is Healthy", expected: []string{"web"}, done: true, object: "web", want: false},
		{name: "nothing expected", object: "web", want: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := NewDriftWatches(nil, nil, time.Minute)
			var tracked, expected []desiredstate.ObjectID
			for _, n := range tc.tracked {
				tracked = append(tracked, deploymentID(n))
			}
			for _, n := range tc.expected {
				expected = append(expected, deploymentID(n))
			}
			w.Track(shop, tracked)
			if expected != nil {
				w.Expect(shop, expected)
				w.Expect(shop, expected)
			}
			if tc.done {
				w.AwaitHealth(shop, false)
			}
			if got := w.healthChanged(gvk).Update(observed(tc.object)); got != tc.want {
				t.Errorf("Update = %v, want %v", got, tc.want)
			}
			if n := len(w.applicationsOf(deploymentID(tc.object))); tc.want && n != 1 {
				t.Errorf("routed to %d Applications, want 1", n)
			}
		})
	}
}
