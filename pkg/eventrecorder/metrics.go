package eventrecorder

import (
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// unknown stands in for a state the Event's object does not have, so that
// every series has a value.
const unknown = "Unknown"

// lifecycleEvents counts every Event a service records, on
// controller-runtime's registry so that each service's metrics endpoint
// serves its own.
var lifecycleEvents = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "kuvryn_sync_lifecycle_events_total",
	Help: "Events recorded by Kuvryn Sync's services, by Event reason and, for Events about an Application, its sync state, health state and phase.",
}, []string{"namespace", "sync", "health", "phase", "reason"})

func init() {
	ctrlmetrics.Registry.MustRegister(lifecycleEvents)
}

// labelValues are the namespace of the Event's object, the state of an
// Application as the caller holds it when it records the Event (Unknown
// for every other kind), and the reason.
func labelValues(regarding runtime.Object, reason string) []string {
	namespace := ""
	if o, ok := regarding.(metav1.Object); ok {
		namespace = o.GetNamespace()
	}
	sync, health, phase := unknown, unknown, unknown
	if app, ok := regarding.(*syncv1.Application); ok {
		sync, health, phase = orUnknown(string(app.Status.Sync)), orUnknown(string(app.Status.Health)), orUnknown(string(app.Status.Phase))
	}
	return []string{namespace, sync, health, phase, reason}
}

func orUnknown(s string) string {
	if s == "" {
		return unknown
	}
	return s
}
