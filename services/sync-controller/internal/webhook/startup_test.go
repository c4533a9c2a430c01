package webhook_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/controlplane"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/webhook"
)

func TestSetup_WebhooksDisabledRegistersNothingAndWarnsOnce(t *testing.T) {
	t.Setenv("ENABLE_WEBHOOKS", "false")
	mgr, err := manager.NewWithOptions(manager.Service{Name: "sync-controller"}, manager.Options{
		MetricsBindAddress:     "0",
		HealthProbeBindAddress: "0",
		WebhookBindAddress:     "127.0.0.1:0",
	}, cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	from := logs.len()
	if err := webhook.Setup(mgr, mgr.GetAPIReader()); err != nil {
		t.Fatal(err)
	}

	var warnings []string
	for _, l := range logs.since(from) {
		if strings.Contains(l, "approvals and rollback requests are unverified") {
			warnings = append(warnings, l)
		}
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "anyone who can update an Application can forge them") {
		t.Errorf("warnings = %q, want one saying approvals and rollback requests can be forged", warnings)
	}
	// The server creates its mux on the first Register: none, nothing registered.
	if mux := mgr.GetWebhookServer().WebhookMux(); mux != nil {
		for _, path := range []string{webhook.MutatePath, webhook.ValidatePath} {
			if _, pattern := mux.Handler(httptest.NewRequest(http.MethodPost, path, nil)); pattern != "" {
				t.Errorf("%s is served by %q, want nothing registered", path, pattern)
			}
		}
	}
}

func TestSetup_LogsPendingRollbackRequestsAtStart(t *testing.T) {
	ns := namespace(t)
	target := revision(t, ns, "api-1", "api", "")
	application(t, ns, "api", nil)
	application(t, ns, "web", nil)
	mustAnnotate(t, alice, ns, "api", map[string]*string{syncv1.RollbackRequestedAnnotation: ptr("api-1")})
	requestedAt := stored(t, ns, "api")[syncv1.RollbackRequestedAtAnnotation]

	// A second replica, started after the request, reports it.
	from := startReplica(t)

	want := []string{
		`"application"="` + ns + `/api"`,
		`"revision"="api-1"`,
		`"requestedBy"="alice"`,
		`"requestedAt"="` + requestedAt + `"`,
		`"desiredState"="` + target.Spec.DesiredState.Digest + `"`,
	}
	report := awaitPendingReport(t, from, ns)
	for _, w := range want {
		if !strings.Contains(report, w) {
			t.Errorf("report %q does not contain %s", report, w)
		}
	}
}

// startReplica starts another manager with the webhooks, stopped at the
// test's end, and returns the number of lines logged before it started.
func startReplica(t *testing.T) int {
	t.Helper()
	port, err := controlplane.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	from := logs.len()
	stop, err := startManager(port)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return from
}

// awaitPendingReport returns the one pending rollback request of namespace ns
// logged after the first from lines, failing the test when none comes within
// 30s or more than one does.
func awaitPendingReport(t *testing.T, from int, ns string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var reported []string
		for _, l := range logs.since(from) {
			if strings.Contains(l, "pending rollback request") && strings.Contains(l, ns+"/") {
				reported = append(reported, l)
			}
		}
		switch {
		case len(reported) == 1:
			return reported[0]
		case len(reported) > 1:
			t.Fatalf("pending rollback requests reported = %q, want one", reported)
		case time.Now().After(deadline):
			t.Fatalf("no pending rollback request in namespace %s logged within 30s", ns)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
