package harness

import (
	"context"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"github.com/kuvryn/kuvryn-sync/pkg/testkit/controlplane"
)

// Shard is one shard's controllers: a source-controller, a sync-controller
// and a notify-controller started with --shard, each electing its own
// leader, with metrics served over plain HTTP on loopback.
type Shard struct {
	Name                 string
	Source, Sync, Notify *Process
	// Metrics maps each process to its metrics address.
	Metrics map[*Process]string
}

// All lists the shard's processes.
func (s *Shard) All() []*Process { return []*Process{s.Source, s.Sync, s.Notify} }

// StartShard starts the controllers of shard beside the services of
// StartServices, and waits until each is ready. Its sync-controller serves
// the admission webhook on a port of its own that is not registered: every
// replica serves the webhook for every object, and the registered one stays
// with the default shard's.
func (e *Env) StartShard(ctx context.Context, shard string, sink *Sink) (*Shard, error) {
	s := &Shard{Name: shard, Metrics: map[*Process]string{}}
	start := func(name string, args ...string) (*Process, error) {
		port, err := controlplane.FreePort()
		if err != nil {
			return nil, err
		}
		metrics := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		p, err := e.StartService(ctx, name, append(append(LeaderFlags(), "--shard="+shard,
			"--metrics-bind-address="+metrics, "--metrics-secure=false"), args...)...)
		if p != nil {
			s.Metrics[p] = metrics
		}
		return p, err
	}
	var err error
	if s.Source, err = start("source-controller", "--source-cache-dir="+filepath.Join(e.Dir, "cache-"+shard)); err != nil {
		return nil, err
	}
	port, err := controlplane.FreePort()
	if err != nil {
		return nil, err
	}
	if s.Sync, err = start("sync-controller",
		"--webhook-bind-address="+net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		"--webhook-cert-path="+filepath.Join(e.Dir, "webhook-certs")); err != nil {
		return nil, err
	}
	if s.Notify, err = start("notify-controller", sink.SinkFlags()...); err != nil {
		return nil, err
	}
	for _, p := range s.All() {
		if err := p.WaitReady(ctx, 2*time.Minute); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Stop stops the shard's processes.
func (s *Shard) Stop() {
	for _, p := range s.All() {
		if p != nil {
			p.Stop()
		}
	}
}
