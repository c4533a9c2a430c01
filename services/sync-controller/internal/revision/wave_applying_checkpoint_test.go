package revision

import (
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/rest"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/impersonate"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/planner"
)

// A wave's objects are recorded in the inventory, and the wave as
// Applying, in one status write before the first of them is applied: here
// every apply of a ConfigMap fails, so the record is all there is.
func TestRollout_AWaveIsRecordedApplyingWithItsInventoryBeforeItIsApplied(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	refused := &atomic.Int32{}
	e.startReconcilerWith(cp.Config, defaultOptions(), refusingApplies("configmaps", refused))
	e.createApplication("shop", nil)
	settings := object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: fast}\n")
	name := e.publish("shop", settings)

	settings.SetNamespace(e.ns)
	rev := e.waitForRevision(name, "wave 0 Applying with the ConfigMap in the inventory", func(rev *syncv1.Revision) bool {
		return len(rev.Status.Waves) == 1 && rev.Status.Waves[0].State == syncv1.WaveApplying &&
			rev.Status.Inventory != nil && len(rev.Status.Inventory.Entries) == 1 &&
			rev.Status.Inventory.Entries[0] == planner.InventoryEntry(settings)
	})
	eventually(t, "the apply of the ConfigMap refused", func() bool { return refused.Load() > 0 }, nil)
	if c := condition(rev.Status.Conditions, syncv1.ConditionRolloutComplete); !contains(c.Message, "attempt 1: applying wave 0 (1 object(s))") {
		t.Errorf("RolloutComplete message = %q, want it to say wave 0 is being applied", c.Message)
	}
	if e.get("v1", "ConfigMap", "settings") != nil {
		t.Errorf("ConfigMap settings exists, but every apply of it was refused")
	}
}

// refusingApplies makes the Reconciler's service-account clients fail every
// apply of resource that is not a dry-run, as a lost connection would, and
// counts the refusals.
func refusingApplies(resource string, refused *atomic.Int32) func(*Reconciler) {
	return answeringApplies(resource, func(*http.Request) (*http.Response, error) {
		refused.Add(1)
		return nil, errors.New("connection refused by the test")
	})
}

// answeringApplies makes the Reconciler's service-account clients answer
// every apply of resource that is not a dry-run with answer instead of the
// API server.
func answeringApplies(resource string, answer func(*http.Request) (*http.Response, error)) func(*Reconciler) {
	return func(r *Reconciler) {
		cfg := rest.CopyConfig(cp.Config)
		cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
			return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
				if req.Method == http.MethodPatch && req.URL.Query().Get("dryRun") == "" &&
					strings.Contains(req.URL.Path, "/"+resource+"/") {
					return answer(req)
				}
				return next.RoundTrip(req)
			})
		})
		r.Clients = impersonate.NewClients(cfg, manager.Scheme(), r.Mapper)
	}
}
