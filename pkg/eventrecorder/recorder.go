// Package eventrecorder records the Events of every Kuvryn Sync service. They
// are written as core/v1 Events carrying firstTimestamp, lastTimestamp and
// count beside eventTime, so the guide's `kubectl get events
// --sort-by=.lastTimestamp` orders them, and each is counted in
// kuvryn_sync_lifecycle_events_total.
package eventrecorder

import (
	"context"
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// New returns the recorder of the reporting controller name (a field
// manager such as kuvryn-sync). It records from now on and stops when mgr
// stops.
func New(mgr ctrl.Manager, name string) (events.EventRecorder, error) {
	b := events.NewBroadcaster(&sink{client: mgr.GetClient()})
	ctx, cancel := context.WithCancel(context.Background())
	stop := func() {
		cancel()
		b.Shutdown()
	}
	if err := b.StartRecordingToSinkWithContext(ctx); err != nil {
		stop()
		return nil, err
	}
	if _, err := b.StartLogging(mgr.GetLogger().WithName("events").V(1)); err != nil {
		stop()
		return nil, err
	}
	if err := mgr.Add(stopper(stop)); err != nil {
		stop()
		return nil, err
	}
	return counting{b.NewRecorder(mgr.GetScheme(), name)}, nil
}

// stopper stops recording when the manager stops, on every replica: a
// standby emits no Events, but its broadcaster runs all the same.
type stopper func()

func (s stopper) Start(ctx context.Context) error {
	<-ctx.Done()
	s()
	return nil
}

func (stopper) NeedLeaderElection() bool { return false }

// counting counts every Event it records.
type counting struct{ events.EventRecorder }

func (c counting) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	c.EventRecorder.Eventf(regarding, related, eventtype, reason, action, note, args...)
	lifecycleEvents.WithLabelValues(labelValues(regarding, reason)...).Inc()
}

// sink writes the events.k8s.io Events client-go's broadcaster makes, and
// its series updates, through the core/v1 API. The events.k8s.io API
// refuses deprecatedFirstTimestamp, deprecatedLastTimestamp and
// deprecatedCount on create, and those are what kubectl get events shows
// as firstTimestamp, lastTimestamp and count, and sorts by; core/v1 takes
// them beside eventTime, as Events of the legacy recorder carry them.
type sink struct{ client client.Client }

func (s *sink) Create(ctx context.Context, ev *eventsv1.Event) (*eventsv1.Event, error) {
	return ev, s.client.Create(ctx, coreEvent(ev))
}

func (s *sink) Update(ctx context.Context, ev *eventsv1.Event) (*eventsv1.Event, error) {
	return ev, s.client.Update(ctx, coreEvent(ev))
}

// Patch records a repeat: the broadcaster patches only the series of an
// Event it has already recorded, and its patch is in events.k8s.io's
// field names, so the patch sent is built from the series.
func (s *sink) Patch(ctx context.Context, ev *eventsv1.Event, _ []byte) (*eventsv1.Event, error) {
	c := coreEvent(ev)
	patch, err := json.Marshal(map[string]any{"series": c.Series, "count": c.Count, "lastTimestamp": c.LastTimestamp})
	if err != nil {
		return nil, err
	}
	target := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: ev.Namespace, Name: ev.Name}}
	return ev, s.client.Patch(ctx, target, client.RawPatch(types.MergePatchType, patch))
}

// coreEvent is ev as core/v1 has it, with the deprecated fields filled
// from eventTime and the series: count 1 and both timestamps at eventTime
// for a first occurrence, the series' count and last time for repeats.
func coreEvent(ev *eventsv1.Event) *corev1.Event {
	first := metav1.NewTime(ev.EventTime.Time)
	c := &corev1.Event{
		ObjectMeta:          *ev.ObjectMeta.DeepCopy(),
		InvolvedObject:      ev.Regarding,
		Related:             ev.Related,
		Reason:              ev.Reason,
		Message:             ev.Note,
		Type:                ev.Type,
		Action:              ev.Action,
		EventTime:           ev.EventTime,
		ReportingController: ev.ReportingController,
		ReportingInstance:   ev.ReportingInstance,
		FirstTimestamp:      first,
		LastTimestamp:       first,
		Count:               1,
	}
	if ev.Series != nil {
		c.Series = &corev1.EventSeries{Count: ev.Series.Count, LastObservedTime: ev.Series.LastObservedTime}
		c.Count = ev.Series.Count
		c.LastTimestamp = metav1.NewTime(ev.Series.LastObservedTime.Time)
	}
	return c
}
