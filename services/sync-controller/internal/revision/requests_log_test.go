package revision

import (
	"net/http"
	"slices"
	"strings"
	"sync"

	"k8s.io/client-go/rest"

	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/impersonate"
)

// startLoggingRequests starts the controller with its service-account
// clients logging the requests for one object.
func (e *testEnv) startLoggingRequests(resource, name string) *requestLog {
	e.t.Helper()
	requests := &requestLog{}
	e.startReconcilerWith(cp.Config, defaultOptions(), func(r *Reconciler) {
		cfg := rest.CopyConfig(cp.Config)
		cfg.Wrap(requests.wrap(resource, name))
		r.Clients = impersonate.NewClients(cfg, manager.Scheme(), r.Mapper)
	})
	return requests
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
