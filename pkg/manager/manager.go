package manager

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/requestlog"
	"github.com/kuvryn/kuvryn-sync/pkg/tracing"
)

// Service describes one deployable for New.
type Service struct {
	// Name is the service name, used for the leader election ID and logs.
	Name string
	// Flags registers the service's own flags; may be nil.
	Flags func(*flag.FlagSet)
	// CacheByObject narrows what the cache keeps of some kinds, such as a
	// status the service never reads; may be nil. Each transform runs after
	// TrimManagedFields.
	CacheByObject map[client.Object]cache.ByObject
	// Sharded lists the kinds the service watches only in its --shard (the
	// sync.kuvryn.io/shard label); a service without them takes no --shard.
	Sharded []client.Object
}

// Scheme holds the built-in kinds and the Kuvryn Sync kinds.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(syncv1.AddToScheme(s))
	return s
}

// New parses args (without the program name) and builds a manager whose
// metrics, probes, leader election and webhook server follow the guide's
// flags. The caller adds its controllers and calls Start.
func New(svc Service, args []string) (ctrl.Manager, error) {
	fs := flag.NewFlagSet(svc.Name, flag.ContinueOnError)
	var o Options
	o.BindFlags(fs)
	if len(svc.Sharded) > 0 {
		o.bindShardFlag(fs)
	}
	if svc.Flags != nil {
		svc.Flags(fs)
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&o.Zap)))
	cfg, err := restConfig(o.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	return NewWithOptions(svc, o, cfg)
}

// restConfig loads --kubeconfig, or what controller-runtime finds. Either
// way client-side rate limiting is off unless the kubeconfig sets a QPS, as
// controller-runtime does, relying on API Priority and Fairness: client-go's
// default of 5 requests a second would make a rollout of hundreds of
// objects crawl.
func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		return ctrl.GetConfig()
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	if cfg.QPS == 0 {
		cfg.QPS = -1
	}
	return cfg, nil
}

// NewWithOptions builds the manager from already parsed options.
func NewWithOptions(svc Service, o Options, cfg *rest.Config) (ctrl.Manager, error) {
	if o.RecordAPIRequests != "" {
		rec, err := requestlog.Create(o.RecordAPIRequests, ctrl.Log.WithName("requestlog"))
		if err != nil {
			return nil, fmt.Errorf("--record-api-requests: %w", err)
		}
		// Every client the service builds from the manager's config, the
		// impersonating ones too, records through it.
		cfg = rest.CopyConfig(cfg)
		cfg.Wrap(rec.Wrap)
	}
	tlsOpts := o.tlsOptions()

	host, port, err := splitHostPort(o.WebhookBindAddress)
	if err != nil {
		return nil, fmt.Errorf("--webhook-bind-address: %w", err)
	}
	webhookOpts := webhook.Options{TLSOpts: tlsOpts, Host: host, Port: port}
	var watchers []*certwatcher.CertWatcher
	if o.WebhookCertPath != "" {
		w, err := certwatcher.New(filepath.Join(o.WebhookCertPath, o.WebhookCertName),
			filepath.Join(o.WebhookCertPath, o.WebhookCertKey))
		if err != nil {
			return nil, fmt.Errorf("loading webhook certificate from --webhook-cert-path %s: %w", o.WebhookCertPath, err)
		}
		watchers = append(watchers, w)
		webhookOpts.TLSOpts = append(webhookOpts.TLSOpts, useCertificate(w))
	}

	metricsOpts := metricsserver.Options{
		BindAddress:   o.MetricsBindAddress,
		SecureServing: o.MetricsSecure,
		TLSOpts:       tlsOpts,
	}
	if o.MetricsSecure {
		metricsOpts.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	if o.MetricsCertPath != "" {
		w, err := certwatcher.New(filepath.Join(o.MetricsCertPath, o.MetricsCertName),
			filepath.Join(o.MetricsCertPath, o.MetricsCertKey))
		if err != nil {
			return nil, fmt.Errorf("loading metrics certificate from --metrics-cert-path %s: %w", o.MetricsCertPath, err)
		}
		watchers = append(watchers, w)
		metricsOpts.TLSOpts = append(metricsOpts.TLSOpts, useCertificate(w))
	}

	if err := validShard(o.Shard); err != nil {
		return nil, err
	}
	labelMetricsWithShard(o.Shard)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 Scheme(),
		Metrics:                metricsOpts,
		WebhookServer:          webhook.NewServer(webhookOpts),
		HealthProbeBindAddress: o.HealthProbeBindAddress,
		PprofBindAddress:       o.PprofBindAddress,
		// Objects are cached without their managedFields' field sets: no
		// reader needs them, and they were most of a cached object's size.
		Cache:                   cache.Options{DefaultTransform: TrimManagedFields, ByObject: byObject(shardCache(svc.CacheByObject, svc.Sharded, o.Shard))},
		LeaderElection:          o.LeaderElect,
		LeaderElectionID:        leaseName(o.LeaderElectionID, svc.Name, o.Shard),
		LeaderElectionNamespace: o.LeaderElectionNamespace,
		LeaseDuration:           &o.LeaseDuration,
		RenewDeadline:           &o.RenewDeadline,
		RetryPeriod:             &o.RetryPeriod,
	})
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	for _, w := range watchers {
		if err := mgr.Add(w); err != nil {
			return nil, err
		}
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, err
	}
	return mgr, nil
}

// byObject chains each kind's own transform after TrimManagedFields, since a
// kind's transform replaces the default one.
func byObject(in map[client.Object]cache.ByObject) map[client.Object]cache.ByObject {
	if len(in) == 0 {
		return nil
	}
	out := make(map[client.Object]cache.ByObject, len(in))
	for obj, by := range in {
		if narrow := by.Transform; narrow != nil {
			by.Transform = func(o any) (any, error) {
				trimmed, err := TrimManagedFields(o)
				if err != nil {
					return nil, err
				}
				return narrow(trimmed)
			}
		}
		out[obj] = by
	}
	return out
}

func splitHostPort(addr string) (string, int, error) {
	if addr == "" {
		addr = ":9443"
	}
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return "", 0, fmt.Errorf("port %q: %w", p, err)
	}
	return host, port, nil
}

// useCertificate serves the watched certificate, so a rotated one is picked up
// without a restart.
func useCertificate(w *certwatcher.CertWatcher) func(*tls.Config) {
	return func(c *tls.Config) { c.GetCertificate = w.GetCertificate }
}

// Main is the body of every service's main: build the manager, let setup add
// controllers, start, and exit non-zero on failure.
func Main(svc Service, setup func(ctrl.Manager) error) {
	log := ctrl.Log.WithName(svc.Name)
	tuneGC(os.LookupEnv)
	mgr, err := New(svc, os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", svc.Name, err)
		os.Exit(2)
	}
	if setup != nil {
		if err := setup(mgr); err != nil {
			log.Error(err, "setting up controllers")
			os.Exit(1)
		}
	}
	ctx := ctrl.SetupSignalHandler()
	shutdownTracing, err := tracing.Setup(ctx, log.WithName("tracing"))
	if err != nil {
		log.Error(err, "tracing is off")
	}
	log.Info("starting manager")
	err = mgr.Start(ctx)
	// Flush the spans of the last reconciles; the signal context is done.
	flushCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	if ferr := shutdownTracing(flushCtx); ferr != nil {
		log.Error(ferr, "flushing traces")
	}
	cancel()
	if err != nil {
		log.Error(err, "manager stopped")
		os.Exit(1)
	}
}
