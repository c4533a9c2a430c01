// Package metrics holds the sync-controller's Prometheus collectors, with the
// labels of the operations guide, registered on controller-runtime's
// registry so that the manager's metrics endpoint serves them.
package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Values of the result label of the reconcile metrics.
const (
	ResultSuccess = "success"
	ResultError   = "error"
)

// unknown stands in for an empty state, so that every series has a value.
const unknown = "Unknown"

var (
	reconcileLabels = []string{"namespace", "sync", "health", "phase", "result"}

	reconcileTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kuvryn_sync_application_reconcile_total",
		Help: "Application reconciles by the Application's sync state, health state and phase after the reconcile, and result.",
	}, reconcileLabels)

	reconcileDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "kuvryn_sync_application_reconcile_duration_seconds",
		Help:    "Duration of Application reconciles.",
		Buckets: prometheus.ExponentialBuckets(0.01, 2, 12),
	}, reconcileLabels)
)

func init() {
	ctrlmetrics.Registry.MustRegister(reconcileTotal, reconcileDuration)
}

// State is the part of an Application's status the metrics are labelled with.
type State struct {
	Namespace string
	Sync      string
	Health    string
	Phase     string
}

func (s State) values(last string) []string {
	return []string{s.Namespace, orUnknown(s.Sync), orUnknown(s.Health), orUnknown(s.Phase), last}
}

// ObserveReconcile counts one reconcile and its duration; failed says
// whether it returned an error.
func ObserveReconcile(s State, failed bool, d time.Duration) {
	result := ResultSuccess
	if failed {
		result = ResultError
	}
	reconcileTotal.WithLabelValues(s.values(result)...).Inc()
	reconcileDuration.WithLabelValues(s.values(result)...).Observe(d.Seconds())
}

func orUnknown(s string) string {
	if s == "" {
		return unknown
	}
	return s
}
