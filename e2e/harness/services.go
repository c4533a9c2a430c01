package harness

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/controlplane"
)

// Lease timings of every service the harness starts: a leader keeps
// renewing through a kube-apiserver restart even while make test starts its
// other packages beside the scenarios on two cores (at 10s/8s it gave up
// there), and a standby still takes over within seconds of the leader's
// death, thanks to the short retry period.
const (
	LeaseDuration = 20 * time.Second
	RenewDeadline = 15 * time.Second
	RetryPeriod   = time.Second
)

// LeaderFlags elect a leader among the replicas of a service, with its
// Lease in SystemNamespace as in a cluster.
func LeaderFlags() []string {
	return []string{
		"--leader-elect",
		"--leader-election-namespace=" + SystemNamespace,
		"--leader-elect-lease-duration=" + LeaseDuration.String(),
		"--leader-elect-renew-deadline=" + RenewDeadline.String(),
		"--leader-elect-retry-period=" + RetryPeriod.String(),
	}
}

// SinkKey is the HMAC key the Sink of StartServices checks signatures with.
const SinkKey = "e2e-hmac-key"

// Services are the running Kuvryn Sync services, one replica each.
type Services struct {
	Source, Sync, Image, Notify, Web *Process
	// Sink is an https NotificationSink receiver the notify-controller
	// trusts, checking signatures with SinkKey.
	Sink *Sink
	// ReceiverURL is the web service's push and image webhook receiver.
	ReceiverURL string
	// ConsoleURL is the web service's read-only console.
	ConsoleURL string
}

// All lists the running services in start order.
func (s *Services) All() []*Process { return []*Process{s.Source, s.Sync, s.Image, s.Notify, s.Web} }

// StartServices starts the five services, each as its own
// process under its own ServiceAccount with leader election, the
// sync-controller with its admission webhook registered (failurePolicy
// Fail) and the web service with the receiver on a loopback port, and waits
// until each reports ready and the webhook admits requests.
func (e *Env) StartServices(ctx context.Context) (*Services, error) {
	var s Services
	var err error
	if s.Source, err = e.StartService(ctx, "source-controller",
		append(LeaderFlags(), "--source-cache-dir="+filepath.Join(e.Dir, "cache"))...); err != nil {
		return nil, err
	}
	webhookFlags, err := e.EnableWebhooks(ctx)
	if err != nil {
		return nil, err
	}
	if s.Sync, err = e.StartService(ctx, "sync-controller", append(LeaderFlags(), webhookFlags...)...); err != nil {
		return nil, err
	}
	if s.Image, err = e.StartService(ctx, "image-controller", LeaderFlags()...); err != nil {
		return nil, err
	}
	sinkDir := filepath.Join(e.Dir, "sink")
	if err := os.MkdirAll(sinkDir, 0o755); err != nil {
		return nil, err
	}
	if s.Sink, err = StartSink(sinkDir, []byte(SinkKey), nil); err != nil {
		return nil, err
	}
	e.closers = append(e.closers, s.Sink.Close)
	if s.Notify, err = e.StartService(ctx, "notify-controller", append(LeaderFlags(), s.Sink.SinkFlags()...)...); err != nil {
		return nil, err
	}
	port, err := controlplane.FreePort()
	if err != nil {
		return nil, err
	}
	receiver := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if port, err = controlplane.FreePort(); err != nil {
		return nil, err
	}
	console := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if s.Web, err = e.StartService(ctx, "web", append(LeaderFlags(),
		"--webhook-receiver-bind-address="+receiver, "--console-bind-address="+console)...); err != nil {
		return nil, err
	}
	s.ReceiverURL = "http://" + receiver
	// localhost, not 127.0.0.1: browsers keep the console's Secure session
	// cookie over plain HTTP only on localhost.
	s.ConsoleURL = "http://localhost:" + strconv.Itoa(port)
	for _, p := range s.All() {
		if err := p.WaitReady(ctx, 2*time.Minute); err != nil {
			return nil, err
		}
	}
	if err := controlplane.WaitForWebhooks(ctx, e.Client, "default", 2*time.Minute); err != nil {
		return nil, err
	}
	return &s, nil
}

// Describe is one line per running service: its name, process id,
// ServiceAccount and probe address.
func (s *Services) Describe() string {
	var out string
	for _, p := range s.All() {
		out += fmt.Sprintf("  %-18s pid %-7d ServiceAccount %s/%s, ready on http://%s/readyz\n",
			p.Name, p.Pid(), SystemNamespace, manager.InstallName(p.Name), p.HealthAddr)
	}
	return out
}
