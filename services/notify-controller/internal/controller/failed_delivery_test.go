package controller

import (
	"net/http"
	"strings"
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/notify-controller/internal/delivery"
)

// TestDelivery_RedirectAndServerErrorFailAfterThreeAttempts: a sink that
// answers 302 or 500 is tried three times; the redirect is not followed;
// the notification counts as failed and the Application gets a
// NotificationFailed Warning Event saying why, without the URL.
func TestDelivery_RedirectAndServerErrorFailAfterThreeAttempts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		typ    syncv1.SinkType
		want   string
	}{
		{name: "302", status: http.StatusFound, typ: syncv1.SinkSlack, want: "HTTP 302 Found; redirects are not followed"},
		{name: "500", status: http.StatusInternalServerError, typ: syncv1.SinkWebhook, want: "HTTP 500 Internal Server Error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			sink := newReceiver(t, tc.status)
			e.createSink("team", tc.typ, sink.url(), "key")
			e.createApplication("api", "team", syncv1.NotificationAwaitingApproval)
			before := deliveries(tc.typ, delivery.ResultFailed)
			e.startController(Options{Delivery: testDelivery(sink.roots())})
			e.createRevision("api", "api-1")
			e.setStatus("api-1", awaitingApproval("api-1"))

			e.eventually("a NotificationFailed Event", func() bool { return len(e.events(syncv1.ReasonNotificationFailed)) > 0 }, nil)
			ev := e.events(syncv1.ReasonNotificationFailed)[0]
			if ev.Type != "Warning" || ev.Regarding.Kind != "Application" || ev.Regarding.Name != "api" {
				t.Errorf("Event %s %s about %s %s, want a Warning about Application api", ev.Type, ev.Reason, ev.Regarding.Kind, ev.Regarding.Name)
			}
			if !strings.Contains(ev.Note, tc.want) || !strings.Contains(ev.Note, "after 3 attempt(s)") || !strings.Contains(ev.Note, "NotificationSink team") {
				t.Errorf("Event note %q, want it to name the sink, 3 attempts and %q", ev.Note, tc.want)
			}
			if strings.Contains(ev.Note, sink.URL) || strings.Contains(ev.Note, secretPath) {
				t.Errorf("Event note %q holds the sink URL", ev.Note)
			}
			if n := len(sink.got()); n != 3 {
				t.Errorf("sink got %d requests, want 3 attempts", n)
			}
			for _, r := range sink.got() {
				if r.path != secretPath {
					t.Errorf("request to %s: the redirect was followed", r.path)
				}
			}
			if d := deliveries(tc.typ, delivery.ResultFailed) - before; d != 1 {
				t.Errorf("failed counter rose by %v, want 1", d)
			}
		})
	}
}
