package revision

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/impersonate"
)

// While a rollout waits for a Deployment, each look reads the Deployment
// live, but the ConfigMap, ServiceAccount and ClusterIP Service it applied
// next to it only from the drift watch's cache.
func TestHealth_StatuslessObjectsAreNotReadLiveWhileARolloutWaits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	gets := &getCounter{byResource: map[string]int{}}
	e.startReconcilerWith(cp.Config, defaultOptions(), func(r *Reconciler) {
		cfg := rest.CopyConfig(cp.Config)
		cfg.Wrap(gets.wrap)
		r.Clients = impersonate.NewClients(cfg, manager.Scheme(), r.Mapper)
	})
	e.createApplication("shop", nil)
	name := e.publish("shop",
		object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: fast}\n"),
		object(t, "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: worker}\n"),
		object(t, "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 80}]}\n"),
		e.gatedDeployment("web"))

	e.waitForRevision(name, "waiting for the Deployment", func(rev *syncv1.Revision) bool {
		return strings.Contains(condition(rev.Status.Conditions, syncv1.ConditionRolloutComplete).Message, "waiting for")
	})
	before := gets.snapshot()
	// Wait for two more looks at the Deployment: the wakes of its status.
	eventually(t, "the rollout looks at the Deployment again", func() bool {
		return gets.snapshot()["deployments"] >= before["deployments"]+2
	}, func() string { return describeRevision(e.revision(name)) })
	e.openGate()
	e.waitForPhase(name, syncv1.PhaseHealthy)
	after := gets.snapshot()

	for _, resource := range []string{"configmaps", "serviceaccounts", "services"} {
		if n := after[resource] - before[resource]; n != 0 {
			t.Errorf("%d GET %s while waiting for health, want 0 (read from the watch cache)", n, resource)
		}
	}
	if after["configmaps"] == 0 {
		t.Errorf("the ConfigMap was never read live; the plan reads it once before its dry-run")
	}
}

// getCounter counts the GET requests of single objects by resource.
type getCounter struct {
	mu         sync.Mutex
	byResource map[string]int
}

func (g *getCounter) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodGet {
			// .../namespaces/<ns>/<resource>/<name>
			parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
			if n := len(parts); n >= 4 && parts[n-4] == "namespaces" {
				g.mu.Lock()
				g.byResource[parts[n-2]]++
				g.mu.Unlock()
			}
		}
		return next.RoundTrip(req)
	})
}

func (g *getCounter) snapshot() map[string]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make(map[string]int, len(g.byResource))
	for k, v := range g.byResource {
		out[k] = v
	}
	return out
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
