package controller

import (
	"net/http"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestSink_DeliveredSaysWhetherTheLastNotificationArrived: a failing sink
// showed nowhere but in Events and a metric. Its Delivered condition turns
// False (NotificationFailed) with the cause, never the URL; it is written
// only when it changes, so a second failure for the same cause leaves the
// sink untouched; it turns True once a notification arrives again; and the
// sink controller's Ready stays beside it.
func TestSink_DeliveredSaysWhetherTheLastNotificationArrived(t *testing.T) {
	e := newEnv(t)
	rcv := newReceiver(t, http.StatusInternalServerError)
	e.createSink("team", syncv1.SinkWebhook, rcv.url(), "key")
	e.createSink("other", syncv1.SinkWebhook, rcv.url(), "key")
	e.createApplication("api", "team", syncv1.NotificationAwaitingApproval, syncv1.NotificationHealthy)
	e.createApplication("web", "other", syncv1.NotificationAwaitingApproval)
	e.startController(Options{Delivery: testDelivery(rcv.roots())})
	for _, name := range []string{"team", "other"} {
		e.eventually("Ready of NotificationSink "+name, func() bool {
			return meta.IsStatusConditionTrue(e.sink(name).Status.Conditions, syncv1.ConditionReady)
		}, e.explain)
	}

	e.createRevision("api", "api-1")
	e.setStatus("api-1", awaitingApproval("api-1"))
	failed := func(name string) func() bool {
		return func() bool {
			c := meta.FindStatusCondition(e.sink(name).Status.Conditions, syncv1.ConditionDelivered)
			return c != nil && c.Status == metav1.ConditionFalse
		}
	}
	e.eventually("Delivered False on team", failed("team"), e.explain)
	team := e.sink("team")
	c := meta.FindStatusCondition(team.Status.Conditions, syncv1.ConditionDelivered)
	want := "the last notification failed after 3 attempt(s): the sink answered HTTP 500 Internal Server Error"
	if c.Reason != syncv1.ReasonNotificationFailed || c.Message != want {
		t.Errorf("Delivered %s/%s %q, want False/%s %q", c.Status, c.Reason, c.Message, syncv1.ReasonNotificationFailed, want)
	}
	if strings.Contains(c.Message, rcv.URL) || strings.Contains(c.Message, secretPath) {
		t.Errorf("Delivered %q holds the sink URL", c.Message)
	}
	if !meta.IsStatusConditionTrue(team.Status.Conditions, syncv1.ConditionReady) {
		t.Errorf("Ready of team is no longer True beside Delivered: %+v", team.Status.Conditions)
	}

	// Another transition fails for the same cause. The one worker delivers
	// in order, so once web's notification has failed, api's has been
	// recorded.
	e.setStatus("api-1", healthy(1))
	e.eventually("the Healthy notification's three attempts", func() bool { return len(rcv.got()) == 6 }, e.explain)
	e.createRevision("web", "web-1")
	e.setStatus("web-1", awaitingApproval("web-1"))
	e.eventually("Delivered False on other", failed("other"), e.explain)
	if rv := e.sink("team").ResourceVersion; rv != team.ResourceVersion {
		t.Errorf("a second failure for the same cause wrote the sink (resourceVersion %s, was %s)", rv, team.ResourceVersion)
	}

	rcv.mu.Lock()
	rcv.status = http.StatusOK
	rcv.mu.Unlock()
	e.createRevision("api", "api-2")
	e.setStatus("api-2", awaitingApproval("api-2"))
	e.eventually("Delivered True on team", func() bool {
		c := meta.FindStatusCondition(e.sink("team").Status.Conditions, syncv1.ConditionDelivered)
		return c != nil && c.Status == metav1.ConditionTrue && c.Reason == syncv1.ReasonSucceeded && c.Message == "the last notification was delivered"
	}, e.explain)
}

func (e *testEnv) sink(name string) *syncv1.NotificationSink {
	e.t.Helper()
	s := &syncv1.NotificationSink{}
	must(e.t, admin.Get(e.t.Context(), client.ObjectKey{Namespace: e.ns, Name: name}, s))
	return s
}
