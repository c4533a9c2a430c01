package revision

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// exists reports whether an object of obj's type named name is in the test's namespace.
func (e *testEnv) exists(obj client.Object, name string) bool {
	e.t.Helper()
	err := admin.Get(e.t.Context(), types.NamespacedName{Namespace: e.ns, Name: name}, obj)
	if apierrors.IsNotFound(err) {
		return false
	}
	must(e.t, err)
	return true
}

func TestHistory_IsBoundedAndOldRevisionsAreCollectedButNeverTheDeployedOne(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startController(defaultOptions())
	e.createApplication("shop", func(app *syncv1.Application) { app.Spec.History.Limit = 1 })

	first := e.publish("shop", configMap(t, "one"))
	e.waitForPhase(first, syncv1.PhaseHealthy)
	failed := e.publish("shop", configMap(t, "two"), object(t, failingJob))
	e.waitForPhase(failed, syncv1.PhaseFailed)

	// Beyond the limit of one, but deployed and last known good.
	if !e.exists(&syncv1.Revision{}, first) {
		t.Fatalf("deployed Revision %s was collected", first)
	}
	app := e.application("shop")
	if len(app.Status.History) != 1 || app.Status.History[0].Revision != failed || app.Status.History[0].Result != syncv1.PhaseFailed {
		t.Errorf("history = %+v, want only the failed attempt at %s", app.Status.History, failed)
	}
	if app.Status.DeployedRevision != first || app.Status.LastKnownGoodRevision != first {
		t.Errorf("deployed %q last known good %q, want %q", app.Status.DeployedRevision, app.Status.LastKnownGoodRevision, first)
	}

	third := e.publish("shop", configMap(t, "three"))
	e.waitForPhase(third, syncv1.PhaseHealthy)
	for _, name := range []string{first, failed} {
		eventually(t, "Revision "+name+" and its desired-state Secret collected", func() bool {
			return !e.exists(&syncv1.Revision{}, name) && !e.exists(&corev1.Secret{}, name)
		}, nil)
	}
	if !e.exists(&syncv1.Revision{}, third) || !e.exists(&corev1.Secret{}, third) {
		t.Errorf("the desired Revision %s or its Secret was collected", third)
	}
	if h := e.application("shop").Status.History; len(h) != 1 || h[0].Revision != third {
		t.Errorf("history = %+v, want only %s", h, third)
	}
}
