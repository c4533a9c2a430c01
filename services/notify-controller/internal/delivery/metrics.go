package delivery

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// Values of the result label.
const (
	ResultDelivered = "delivered"
	ResultFailed    = "failed"
	ResultDropped   = "dropped"
)

// Deliveries counts notifications by sink type and result, on
// controller-runtime's registry so that the manager's metrics endpoint
// serves it.
var Deliveries = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "kuvryn_sync_notification_deliveries_total",
	Help: "Notifications by sink type and result: delivered, failed after every attempt, or dropped because the queue was full.",
}, []string{"type", "result"})

func init() {
	ctrlmetrics.Registry.MustRegister(Deliveries)
	// Every series exists from the start, so a rate over it is defined
	// before the first failure.
	for _, t := range []syncv1.SinkType{syncv1.SinkWebhook, syncv1.SinkSlack, syncv1.SinkGitHub, syncv1.SinkGitLab} {
		for _, r := range []string{ResultDelivered, ResultFailed, ResultDropped} {
			Deliveries.WithLabelValues(string(t), r)
		}
	}
}
