package memory

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/kuvryn/kuvryn-sync/pkg/desiredstate"
)

// deploymentID names Deployment shop/name.
func deploymentID(name string) desiredstate.ObjectID {
	return desiredstate.ObjectID{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: name}
}

// observed is the update of Deployment shop/name once kube-controller-manager
// observed its generation: a status change alone.
func observed(name string) event.UpdateEvent {
	return event.UpdateEvent{ObjectOld: deployment(name, 0), ObjectNew: deployment(name, 1)}
}

func deployment(name string, observedGeneration int64) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, Generation: 1},
		Status: appsv1.DeploymentStatus{ObservedGeneration: observedGeneration}}
}

// While an Application waits for the health of what it applied, every change
// to those objects, status included, wakes it; otherwise status changes do
// not, and other Applications' objects never do.
func TestHealthChanged_WakesOnlyApplicationsWaitingForTheirObjects(t *testing.T) {
	gvk := appsv1.SchemeGroupVersion.WithKind("Deployment")
	shop := types.NamespacedName{Namespace: "shop", Name: "web"}
	for _, tc := range []struct {
		name    string
		waiting bool
		object  string
		want    bool
	}{
		{name: "its Deployment observed while it waits", waiting: true, object: "web", want: true},
		{name: "its Deployment observed once it no longer waits", waiting: false, object: "web", want: false},
		{name: "a Deployment it did not apply", waiting: true, object: "api", want: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := NewDriftWatches(nil, nil, time.Minute)
			w.Track(shop, []desiredstate.ObjectID{deploymentID("web")})
			w.AwaitHealth(shop, true)
			w.AwaitHealth(shop, tc.waiting)
			p := w.healthChanged(gvk)
			if got := p.Update(observed(tc.object)); got != tc.want {
				t.Errorf("Update = %v, want %v", got, tc.want)
			}
			if p.Create(event.CreateEvent{Object: deployment(tc.object, 0)}) {
				t.Error("the initial list must not wake an Application")
			}
		})
	}
}
