package apivalidation_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestEvents_EveryServicesEventsAreCounted: kuvryn_sync_lifecycle_events_total
// counted only the sync-controller's Events. Every service records through
// the same recorder now, so an Event about any kind counts by its reason:
// with the Application's state for an Application (as the service held it
// when it recorded the Event), Unknown for other kinds.
func TestEvents_EveryServicesEventsAreCounted(t *testing.T) {
	ns := namespace(t)
	rec := startRecorder(t)
	app := validApplication(ns)
	app.Status = syncv1.ApplicationStatus{Sync: syncv1.SyncStateOutOfSync, Health: syncv1.HealthDegraded, Phase: syncv1.PhaseFailed}
	for _, tc := range []struct {
		service   string
		regarding runtime.Object
		reason    string
		// labels are sync, health and phase.
		labels [3]string
	}{
		{"source-controller", app, syncv1.ReasonRenderFailed, [3]string{"OutOfSync", "Degraded", "Failed"}},
		{"source-controller", app, syncv1.ReasonDecryptionFailed, [3]string{"OutOfSync", "Degraded", "Failed"}},
		{"source-controller", validRepository(ns), syncv1.ReasonFetchFailed, [3]string{"Unknown", "Unknown", "Unknown"}},
		{"notify-controller", app, syncv1.ReasonNotificationFailed, [3]string{"OutOfSync", "Degraded", "Failed"}},
		{"image-controller", validImagePolicy(ns), syncv1.ReasonScanFailed, [3]string{"Unknown", "Unknown", "Unknown"}},
		{"image-controller", validRepository(ns), syncv1.ReasonPushFailed, [3]string{"Unknown", "Unknown", "Unknown"}},
	} {
		t.Run(tc.service+" "+tc.reason, func(t *testing.T) {
			labels := map[string]string{"namespace": ns, "sync": tc.labels[0], "health": tc.labels[1], "phase": tc.labels[2], "reason": tc.reason}
			before := lifecycleEvents(t, labels)
			rec.Eventf(tc.regarding, nil, corev1.EventTypeWarning, tc.reason, "Test", "counted")
			if after := lifecycleEvents(t, labels); after != before+1 {
				t.Errorf("kuvryn_sync_lifecycle_events_total%v went from %v to %v, want one more", labels, before, after)
			}
		})
	}
}

// lifecycleEvents reads kuvryn_sync_lifecycle_events_total with exactly
// labels; a series not there yet is 0.
func lifecycleEvents(t *testing.T, labels map[string]string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "kuvryn_sync_lifecycle_events_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			match := len(m.GetLabel()) == len(labels)
			for _, l := range m.GetLabel() {
				match = match && labels[l.GetName()] == l.GetValue()
			}
			if match {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}
