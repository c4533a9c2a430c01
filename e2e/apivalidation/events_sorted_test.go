package apivalidation_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/eventrecorder"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
)

// TestEvents_GuidesSortByLastTimestampOrdersThem: the guide's `kubectl get
// events -n <namespace> --sort-by=.lastTimestamp` orders Kuvryn Sync's
// Events by when they last happened. Events written through the
// events.k8s.io API carry no lastTimestamp, and kubectl listed them in the
// order of their names. Here the Events are about objects whose names sort
// against the time, and one repeats last, so only lastTimestamp, kept up to
// date by a repeat, gives the order.
func TestEvents_GuidesSortByLastTimestampOrdersThem(t *testing.T) {
	ns := namespace(t)
	rec := startRecorder(t)
	apps := map[string]*syncv1.Application{}
	for _, name := range []string{"c", "b", "a"} {
		app := validApplication(ns)
		app.Name = name
		if err := k8s.Create(t.Context(), app); err != nil {
			t.Fatal(err)
		}
		apps[name] = app
	}
	// lastTimestamp has whole seconds: a second apart, each Event is later.
	for _, name := range []string{"c", "b", "a", "c"} {
		rec.Eventf(apps[name], nil, corev1.EventTypeNormal, "Sorted", "Test", "Event about %s", name)
		waitForEvent(t, ns, name)
		time.Sleep(1100 * time.Millisecond)
	}
	var last *corev1.Event
	eventually(t, "the repeat about c counted", func() bool {
		last = eventAbout(t, ns, "c")
		return last != nil && last.Count == 2
	})
	if last.FirstTimestamp.IsZero() || !last.LastTimestamp.After(last.FirstTimestamp.Time) || last.EventTime.IsZero() ||
		last.Action != "Test" || last.ReportingController != "kuvryn-test" {
		t.Errorf("Event about c: firstTimestamp %v lastTimestamp %v eventTime %v action %q reportingComponent %q; "+
			"want both timestamps, the later one last, and the events.k8s.io fields kept",
			last.FirstTimestamp, last.LastTimestamp, last.EventTime, last.Action, last.ReportingController)
	}

	out := kubectl(t, "get", "events", "-n", ns, "--sort-by=.lastTimestamp", "--field-selector", "reason=Sorted",
		"-o", "custom-columns=OBJECT:.involvedObject.name,COUNT:.count", "--no-headers")
	if got, want := strings.Fields(out), []string{"b", "1", "a", "1", "c", "2"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("kubectl get events --sort-by=.lastTimestamp:\n%s\nwant objects and counts %v", out, want)
	}
}

// startRecorder starts a manager with the services' recorder, reporting as
// kuvryn-test, until the test ends.
func startRecorder(t *testing.T) events.EventRecorder {
	t.Helper()
	mgr, err := ctrl.NewManager(config, ctrl.Options{
		Scheme: manager.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
	})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := eventrecorder.New(mgr, "kuvryn-test")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Error(err)
		}
	})
	return rec
}

func waitForEvent(t *testing.T, ns, name string) {
	t.Helper()
	eventually(t, "an Event about "+name, func() bool { return eventAbout(t, ns, name) != nil })
}

// eventAbout is the Event about the Application name, or nil.
func eventAbout(t *testing.T, ns, name string) *corev1.Event {
	t.Helper()
	var list corev1.EventList
	if err := k8s.List(t.Context(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		if list.Items[i].InvolvedObject.Name == name {
			return &list.Items[i]
		}
	}
	return nil
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
