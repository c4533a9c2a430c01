package revision

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/impersonate"
)

// Once ConfigMaps are watched, a ConfigMap the watch has not seen is planned
// from its dry-run alone and then applied: it is never read first.
func TestPlan_ANewObjectOfAWatchedKindIsDryRunWithoutBeingReadFirst(t *testing.T) {
	e := newEnv(t)
	requests := &requestLog{}
	e.startReconcilerWith(cp.Config, defaultOptions(), func(r *Reconciler) {
		cfg := rest.CopyConfig(cp.Config)
		cfg.Wrap(requests.wrap("configmaps", "added"))
		r.Clients = impersonate.NewClients(cfg, manager.Scheme(), r.Mapper)
	})
	e.createApplication("shop", nil)
	first := e.publish("shop", settings(t, "blue"))
	e.waitForPhase(first, syncv1.PhaseHealthy)

	second := e.publish("shop", settings(t, "blue"), configMap(t, "added"))
	e.waitForPhase(second, syncv1.PhaseHealthy)
	if e.get("v1", "ConfigMap", "added") == nil {
		t.Fatal("the new ConfigMap was not applied")
	}
	got := requests.snapshot()
	if want := []string{"PATCH dry-run", "PATCH"}; len(got) < 2 || !slices.Equal(got[:2], want) {
		t.Errorf("first requests for ConfigMap added = %q, want %q: planned by its dry-run, then applied", got, want)
	}
}

// An object that exists although the watch cache has not seen it is read
// and planned in full: here another Application owns it, which only the
// read tells.
func TestPlan_AnObjectTheWatchCacheHasNotSeenIsReadBeforeItIsPlanned(t *testing.T) {
	e := newEnv(t)
	e.startReconcilerWith(cp.Config, defaultOptions(), func(r *Reconciler) {
		r.absent = func(context.Context, *unstructured.Unstructured) bool { return true }
	})
	e.createApplication("shop", nil)
	e.createApplication("cart", nil)
	shop := e.publish("shop", settings(t, "blue"))
	e.waitForPhase(shop, syncv1.PhaseHealthy)

	cart := e.publish("cart", settings(t, "red"))
	rev := e.waitForPhase(cart, syncv1.PhaseFailed)
	if c := condition(rev.Status.Conditions, syncv1.ConditionPlanned); c.Reason != syncv1.ReasonApplyConflict ||
		!contains(c.Message, "belongs to Application "+e.ns+"/shop") {
		t.Errorf("Planned = %+v, want ApplyConflict naming the owner", c)
	}
	if got := color(e); got != "blue" {
		t.Errorf("ConfigMap settings color %q, want shop's blue kept", got)
	}
}

// requestLog records the requests for one object, as "METHOD" or
// "METHOD dry-run".
type requestLog struct {
	mu   sync.Mutex
	seen []string
}

func (l *requestLog) wrap(resource, name string) func(http.RoundTripper) http.RoundTripper {
	return func(next http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			if strings.HasSuffix(req.URL.Path, "/"+resource+"/"+name) {
				what := req.Method
				if req.URL.Query().Get("dryRun") != "" {
					what += " dry-run"
				}
				l.mu.Lock()
				l.seen = append(l.seen, what)
				l.mu.Unlock()
			}
			return next.RoundTrip(req)
		})
	}
}

func (l *requestLog) snapshot() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.seen)
}
