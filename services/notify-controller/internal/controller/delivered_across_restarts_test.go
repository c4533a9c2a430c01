package controller

import (
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/services/notify-controller/internal/payload"
)

// TestTransitions_ReachedWhileStoppedAreDeliveredOnceAfterStart: a
// transition the Revision reached while no controller ran reaches the sink
// once a controller starts, and is recorded in the Application's
// status.deliveredNotifications; a controller started after that sends it
// not again, and writes the Application once per transition it delivers.
func TestTransitions_ReachedWhileStoppedAreDeliveredOnceAfterStart(t *testing.T) {
	for _, tc := range []struct {
		name string
		// running are the states written, each delivered, while a
		// controller runs before it stops.
		running []func() *syncv1.RevisionStatus
		// stopped are the states written while no controller runs.
		stopped []func() *syncv1.RevisionStatus
		want    []string
	}{
		{name: "AwaitingApproval reached before the controller ever ran",
			stopped: []func() *syncv1.RevisionStatus{func() *syncv1.RevisionStatus { return awaitingApproval("api-1") }},
			want:    []string{"AwaitingApproval"}},
		{name: "Healthy reached while the controller was down after AwaitingApproval",
			running: []func() *syncv1.RevisionStatus{func() *syncv1.RevisionStatus { return awaitingApproval("api-1") }},
			stopped: []func() *syncv1.RevisionStatus{
				func() *syncv1.RevisionStatus { return applying(1) },
				func() *syncv1.RevisionStatus { return healthy(1) },
			},
			want: []string{"AwaitingApproval", "Healthy"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			sink := newReceiver(t, 0)
			e.createSink("audit", syncv1.SinkWebhook, sink.url(), "key")
			e.createApplication("api", "audit", syncv1.NotificationAwaitingApproval, syncv1.NotificationHealthy, syncv1.NotificationFailed)
			e.createRevision("api", "api-1")
			o := Options{Delivery: testDelivery(sink.roots())}

			if len(tc.running) > 0 {
				_, stop := e.startController(o)
				for i, st := range tc.running {
					e.setStatus("api-1", st())
					e.waitDelivered(sink, tc.want[i])
				}
				stop()
			}
			for _, st := range tc.stopped {
				e.setStatus("api-1", st())
			}
			_, stop := e.startController(o)
			e.waitDelivered(sink, tc.want[len(tc.want)-1])
			stop()

			// The next controller finds everything recorded: it delivers
			// and writes only the transition that follows, which marks the
			// point where anything it would send again has been sent.
			writes := e.countWrites("api")
			e.startController(o)
			failed := healthy(1)
			failed.Phase = syncv1.PhaseFailed
			failed.Conditions[2] = cond(syncv1.ConditionRolloutComplete, false, syncv1.ReasonHealthFailure, "Deployment api is Degraded")
			e.setStatus("api-1", failed)
			e.waitDelivered(sink, "Failed")

			got := sinkEvents(t, sink)
			if want := strings.Join(append(tc.want, "Failed"), ","); strings.Join(got, ",") != want {
				t.Errorf("sink got %v, want %s, each once", got, want)
			}
			if n := writes.Load(); n != 1 {
				t.Errorf("the restarted controller wrote the Application %d times for one delivered transition, want 1", n)
			}
		})
	}
}

// waitDelivered waits until sink received event and the Application api
// records it as delivered.
func (e *testEnv) waitDelivered(sink *receiver, event string) {
	e.t.Helper()
	e.eventually(event+" at the sink", func() bool { return slices.Contains(sinkEvents(e.t, sink), event) }, e.explain)
	e.waitRecorded(event)
}

// waitRecorded waits until the Application api records event as delivered.
func (e *testEnv) waitRecorded(event string) {
	e.t.Helper()
	e.eventually(event+" recorded as delivered", func() bool {
		for _, d := range e.application("api").Status.DeliveredNotifications {
			if string(d.Event) == event {
				return true
			}
		}
		return false
	}, e.explain)
}

// countWrites counts the updates of the Application from now on.
func (e *testEnv) countWrites(name string) *atomic.Int32 {
	e.t.Helper()
	wc, err := client.NewWithWatch(cp.Config, client.Options{Scheme: manager.Scheme()})
	must(e.t, err)
	app := e.application(name)
	w, err := wc.Watch(e.t.Context(), &syncv1.ApplicationList{}, client.InNamespace(e.ns),
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: app.ResourceVersion, FieldSelector: "metadata.name=" + name}})
	must(e.t, err)
	e.t.Cleanup(w.Stop)
	var n atomic.Int32
	go func() {
		for ev := range w.ResultChan() {
			if ev.Type == watch.Modified {
				n.Add(1)
			}
		}
	}()
	return &n
}

// sinkEvents are the events of the notifications sink received, in order.
func sinkEvents(t *testing.T, sink *receiver) []string {
	t.Helper()
	var events []string
	for _, r := range sink.got() {
		var n payload.Notification
		must(t, json.Unmarshal(r.body, &n))
		events = append(events, string(n.Event))
	}
	return events
}
