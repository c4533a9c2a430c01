package revision

import (
	"slices"
	"testing"

	"k8s.io/client-go/rest"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/impersonate"
)

// A new Revision that changes one ConfigMap of two dry-runs both, and
// applies only the one that changes: the other's dry-run returned it as it
// is, managed fields included.
func TestApply_AnObjectThePlanFoundUnchangedIsNotAppliedAgain(t *testing.T) {
	e := newEnv(t)
	requests := &requestLog{}
	e.startReconcilerWith(cp.Config, defaultOptions(), func(r *Reconciler) {
		cfg := rest.CopyConfig(cp.Config)
		cfg.Wrap(requests.wrap("configmaps", "other"))
		r.Clients = impersonate.NewClients(cfg, manager.Scheme(), r.Mapper)
	})
	e.createApplication("shop", nil)
	first := e.publish("shop", settings(t, "blue"), configMap(t, "other"))
	e.waitForPhase(first, syncv1.PhaseHealthy)
	before := len(requests.snapshot())

	second := e.publish("shop", settings(t, "green"), configMap(t, "other"))
	e.waitForPhase(second, syncv1.PhaseHealthy)
	if got := color(e); got != "green" {
		t.Fatalf("ConfigMap settings color %q, want green applied", got)
	}
	got := requests.snapshot()[before:]
	if !slices.Contains(got, "PATCH dry-run") || slices.Contains(got, "PATCH") {
		t.Errorf("requests for the unchanged ConfigMap other during the second rollout = %q, want its dry-run and no apply", got)
	}
}
