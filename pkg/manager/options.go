// Package manager starts every Kuvryn Sync service the same way: the
// operations guide's flags, metrics, health probes, leader election and the
// webhook server, on a controller-runtime manager.
package manager

import (
	"crypto/tls"
	"flag"
	"os"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// Options are the manager flags of the operations guide.
type Options struct {
	MetricsBindAddress     string
	MetricsSecure          bool
	HealthProbeBindAddress string
	// PprofBindAddress serves net/http/pprof; "0" disables it.
	PprofBindAddress string
	LeaderElect      bool
	EnableHTTP2      bool
	// RecordAPIRequests is a file that receives every API request but
	// watches, bodies of writes included; empty records none.
	RecordAPIRequests string

	// LeaderElectionID names the Lease; empty is the service's InstallName.
	LeaderElectionID string
	// LeaderElectionNamespace holds the Lease; empty is the Pod's namespace.
	LeaderElectionNamespace string
	LeaseDuration           time.Duration
	RenewDeadline           time.Duration
	RetryPeriod             time.Duration

	WebhookBindAddress string
	WebhookCertPath    string
	WebhookCertName    string
	WebhookCertKey     string

	MetricsCertPath string
	MetricsCertName string
	MetricsCertKey  string

	// Shard is the value of the sync.kuvryn.io/shard label of the objects
	// this process serves; empty serves the objects without the label.
	Shard string

	// Kubeconfig is the kubeconfig file to use; empty uses KUBECONFIG or
	// the in-cluster configuration.
	Kubeconfig string

	Zap zap.Options
}

// BindFlags registers the shared flags on fs with the guide's defaults.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", "0",
		"Metrics address, such as :8443; 0 disables metrics.")
	fs.BoolVar(&o.MetricsSecure, "metrics-secure", true,
		"Serve metrics over HTTPS with authentication and authorization.")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", ":8081",
		"Address of /healthz and /readyz.")
	fs.StringVar(&o.PprofBindAddress, "pprof-bind-address", "0",
		"Address of the Go profiler (/debug/pprof/), such as 127.0.0.1:6060; 0 disables it. Off by default: profiles show the process's memory.")
	fs.StringVar(&o.RecordAPIRequests, "record-api-requests", "",
		"File that receives one JSON line per API request (but watches) the service sends, with the bodies of writes, for replaying in benchmarks; empty records none. For benchmarks only: the bodies hold Secrets' desired state, the plaintext of SOPS files among it.")
	fs.BoolVar(&o.LeaderElect, "leader-elect", false,
		"Elect a leader so that only one replica reconciles at a time.")
	fs.StringVar(&o.LeaderElectionID, "leader-election-id", "",
		"Name of the leader-election Lease; empty is the Deployment name of the raw manifests.")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", "",
		"Namespace of the leader-election Lease; empty is the Pod's own, which a process outside a cluster must set.")
	// controller-runtime's defaults; tests shorten them to see a failover quickly.
	fs.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", 15*time.Second,
		"How long a non-leader waits after the last renewal before taking the lease.")
	fs.DurationVar(&o.RenewDeadline, "leader-elect-renew-deadline", 10*time.Second,
		"How long the leader keeps retrying to renew before it gives the lease up.")
	fs.DurationVar(&o.RetryPeriod, "leader-elect-retry-period", 2*time.Second,
		"How often leader-election clients try to acquire or renew the lease.")
	fs.BoolVar(&o.EnableHTTP2, "enable-http2", false,
		"Enable HTTP/2 for the metrics and webhook servers.")
	fs.StringVar(&o.WebhookBindAddress, "webhook-bind-address", ":9443", "Address of the admission webhook server.")
	fs.StringVar(&o.WebhookCertPath, "webhook-cert-path", "", "Directory holding the webhook certificate.")
	fs.StringVar(&o.WebhookCertName, "webhook-cert-name", "tls.crt", "Webhook certificate file name.")
	fs.StringVar(&o.WebhookCertKey, "webhook-cert-key", "tls.key", "Webhook key file name.")
	fs.StringVar(&o.MetricsCertPath, "metrics-cert-path", "", "Directory holding the metrics server certificate.")
	fs.StringVar(&o.MetricsCertName, "metrics-cert-name", "tls.crt", "Metrics server certificate file name.")
	fs.StringVar(&o.MetricsCertKey, "metrics-cert-key", "tls.key", "Metrics server key file name.")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "Kubeconfig file; empty uses KUBECONFIG or the in-cluster configuration.")
	o.Zap.BindFlags(fs)
}

// bindShardFlag registers --shard, for the services that shard.
func (o *Options) bindShardFlag(fs *flag.FlagSet) {
	fs.StringVar(&o.Shard, "shard", "",
		"Reconcile only the Repositories and Applications labelled sync.kuvryn.io/shard=<shard> (and what follows them); empty reconciles those without the label.")
}

// tlsOptions turn HTTP/2 off unless asked for, against the HTTP/2 Rapid Reset
// and Stream Cancellation attacks (CVE-2023-44487, CVE-2023-39325).
func (o *Options) tlsOptions() []func(*tls.Config) {
	if o.EnableHTTP2 {
		return nil
	}
	return []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }}
}

// WebhooksEnabled reports whether the admission webhooks are served: unless
// ENABLE_WEBHOOKS is "false".
func WebhooksEnabled() bool {
	return !strings.EqualFold(os.Getenv("ENABLE_WEBHOOKS"), "false")
}
