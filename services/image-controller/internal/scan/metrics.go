package scan

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Values of the result label of kuvryn_sync_image_scans_total.
const (
	requestSuccess = "success"
	requestError   = "error"
)

// requests counts registry requests, as the guide's "Registry requests are
// rate-limited per registry host and counted in kuvryn_sync_image_scans_total"
// says: every request a scan sends, token exchanges included.
var requests = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "kuvryn_sync_image_scans_total",
	Help: "Registry requests of ImagePolicy scans by result: success when the registry answered below 400 or challenged for credentials, error otherwise.",
}, []string{"result"})

func init() {
	metrics.Registry.MustRegister(requests)
	// Both series exist from the start, so a rate() over them is defined.
	requests.WithLabelValues(requestSuccess)
	requests.WithLabelValues(requestError)
}

// requestResult is success when the registry answered below 400, or with
// the 401 challenge a registry answers a request that carried no
// credentials (the first step of every authenticated scan), and error
// when it answered otherwise or not at all.
func requestResult(req *http.Request, resp *http.Response, err error) string {
	switch {
	case err != nil:
		return requestError
	case resp.StatusCode < 400:
		return requestSuccess
	case resp.StatusCode == http.StatusUnauthorized && req.Header.Get("Authorization") == "" && resp.Header.Get("WWW-Authenticate") != "":
		return requestSuccess
	default:
		return requestError
	}
}
