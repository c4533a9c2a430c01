package controller

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Values of the result label of kuvryn_sync_image_scans_total.
const (
	scanSuccess = "success"
	scanError   = "error"
)

// scansTotal counts scans: success when an image was selected, error for
// every scan that selected none (registry failure, refused credentials, no
// matching tag).
var scansTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "kuvryn_sync_image_scans_total",
	Help: "ImagePolicy registry scans by result.",
}, []string{"result"})

func init() {
	metrics.Registry.MustRegister(scansTotal)
	// Both series exist from the start, so a rate() over them is defined.
	scansTotal.WithLabelValues(scanSuccess)
	scansTotal.WithLabelValues(scanError)
}
