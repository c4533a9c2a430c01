package controller

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/controlplane"
	"github.com/kuvryn/kuvryn-sync/services/notify-controller/internal/delivery"
)

// TestSecrets_SinkURLNeverInLogsEventsOrStatus: after a delivery that
// succeeds, one that fails, one to a sink whose TLS certificate is not
// trusted, one to a port nobody listens on and a refused http:// URL, no log line, Event or status of the
// namespace holds the URL, its host and port, or its secret path.
func TestSecrets_SinkURLNeverInLogsEventsOrStatus(t *testing.T) {
	e := newEnv(t)
	good := newReceiver(t, 0)
	bad := newReceiver(t, http.StatusInternalServerError)
	untrusted := newUntrustedReceiver(t)
	e.createSink("good", syncv1.SinkSlack, good.url(), "")
	e.createSink("bad", syncv1.SinkWebhook, bad.url(), "key")
	e.createSink("plain", syncv1.SinkSlack, "http://"+strings.TrimPrefix(good.URL, "https://")+secretPath, "")
	e.createSink("untrusted", syncv1.SinkSlack, untrusted.url(), "")
	closed := newReceiver(t, 0)
	closed.Close()
	e.createSink("closed", syncv1.SinkSlack, closed.url(), "")
	sinks := []string{"good", "bad", "plain", "untrusted", "closed"}
	for _, s := range sinks {
		e.createApplication("app-"+s, s, syncv1.NotificationAwaitingApproval)
	}
	failed := deliveries(syncv1.SinkWebhook, delivery.ResultFailed)
	e.startController(Options{Delivery: testDelivery(good.roots())})
	for _, s := range sinks {
		e.createRevision("app-"+s, "app-"+s+"-1")
		e.setStatus("app-"+s+"-1", awaitingApproval("app-"+s+"-1"))
	}
	e.eventually("deliveries settled", func() bool {
		return len(good.got()) == 1 && deliveries(syncv1.SinkWebhook, delivery.ResultFailed)-failed == 1 &&
			len(e.events(syncv1.ReasonNotificationFailed)) >= 4
	}, func() string { return logs.String() })

	var shown strings.Builder
	shown.WriteString(logs.String())
	for _, ev := range e.events("") {
		out, _ := yaml.Marshal(ev)
		shown.Write(out)
	}
	for _, list := range []client.ObjectList{&syncv1.ApplicationList{}, &syncv1.NotificationSinkList{}} {
		must(t, admin.List(t.Context(), list, client.InNamespace(e.ns)))
		out, _ := yaml.Marshal(list)
		shown.Write(out)
	}
	for _, r := range []*receiver{good, bad, untrusted, closed} {
		hostPort := strings.TrimPrefix(r.URL, "https://")
		for _, secret := range []string{r.url(), hostPort, secretPath, "T0SECRET", "xoxsecrettoken"} {
			if i := strings.Index(shown.String(), secret); i >= 0 {
				t.Errorf("%q shown in logs, Events or status: ...%s...", secret, shown.String()[max(0, i-200):min(len(shown.String()), i+100)])
			}
		}
	}
	for _, why := range []string{"TLS certificate is not signed by a trusted CA", "the sink refused the connection", "HTTP 500"} {
		if !strings.Contains(shown.String(), why) {
			t.Errorf("no Event says %q:\n%v", why, e.events(syncv1.ReasonNotificationFailed))
		}
	}
}

// newUntrustedReceiver serves with a certificate of a CA of its own, which
// the controller does not trust.
func newUntrustedReceiver(t *testing.T) *receiver {
	t.Helper()
	dir := t.TempDir()
	if _, err := controlplane.WebhookCertificates(dir); err != nil {
		t.Fatal(err)
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
	must(t, err)
	r := &receiver{}
	r.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		r.mu.Lock()
		r.requests = append(r.requests, received{})
		r.mu.Unlock()
	}))
	r.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	r.StartTLS()
	t.Cleanup(r.Close)
	return r
}
