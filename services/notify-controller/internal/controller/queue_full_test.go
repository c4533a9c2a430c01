package controller

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/notify-controller/internal/delivery"
)

// TestQueue_FullQueueDropsAndCounts: while the one worker is stuck on a
// slow sink and the queue of one is full, further notifications are
// dropped, counted and reported, and reconciliation goes on.
func TestQueue_FullQueueDropsAndCounts(t *testing.T) {
	e := newEnv(t)
	sink := newReceiver(t, 0)
	sink.hold = make(chan struct{})
	released := false
	release := func() {
		if !released {
			released = true
			close(sink.hold)
		}
	}
	t.Cleanup(release)
	e.createSink("slow", syncv1.SinkSlack, sink.url(), "")
	const apps = 5
	for i := range apps {
		e.createApplication(fmt.Sprintf("app-%d", i), "slow", syncv1.NotificationAwaitingApproval)
	}
	o := Options{Delivery: testDelivery(sink.roots())}
	o.Delivery.QueueSize = 1
	dropped := deliveries(syncv1.SinkSlack, delivery.ResultDropped)
	delivered := deliveries(syncv1.SinkSlack, delivery.ResultDelivered)
	e.startController(o)

	e.createRevision("app-0", "app-0-1")
	e.setStatus("app-0-1", awaitingApproval("app-0-1"))
	e.eventually("the worker stuck on the first delivery", func() bool { return len(sink.got()) == 1 }, nil)
	for i := 1; i < apps; i++ {
		rev := fmt.Sprintf("app-%d-1", i)
		e.createRevision(fmt.Sprintf("app-%d", i), rev)
		e.setStatus(rev, awaitingApproval(rev))
	}
	// One waits in the queue; the other three are dropped.
	e.eventually("three dropped", func() bool { return deliveries(syncv1.SinkSlack, delivery.ResultDropped)-dropped == apps-2 }, nil)
	e.eventually("NotificationsReady on every Application while the worker is stuck", func() bool {
		for i := range apps {
			if !meta.IsStatusConditionTrue(e.application(fmt.Sprintf("app-%d", i)).Status.Conditions, syncv1.ConditionNotificationsReady) {
				return false
			}
		}
		return true
	}, nil)
	e.eventually("NotificationFailed Events for the dropped", func() bool {
		n := 0
		for _, ev := range e.events(syncv1.ReasonNotificationFailed) {
			if strings.Contains(ev.Note, "notification queue is full") {
				n++
			}
		}
		return n == apps-2
	}, nil)
	release()
	e.eventually("the queued one delivered", func() bool {
		return deliveries(syncv1.SinkSlack, delivery.ResultDelivered)-delivered == 2
	}, nil)
	if got := deliveries(syncv1.SinkSlack, delivery.ResultDropped) - dropped; got != apps-2 {
		t.Errorf("dropped counter rose by %v, want %d", got, apps-2)
	}
}
