package revision

import (
	"slices"
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// A new Revision that changes one ConfigMap of two dry-runs both, and
// applies only the one that changes: the other's dry-run returned it as it
// is, managed fields included.
func TestApply_AnObjectThePlanFoundUnchangedIsNotAppliedAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	requests := e.startLoggingRequests("configmaps", "other")
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
