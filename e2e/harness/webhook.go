package harness

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"github.com/kuvryn/kuvryn-sync/pkg/testkit/controlplane"
)

// EnableWebhooks prepares the sync-controller's admission webhooks for this
// environment: a serving certificate under Dir/webhook-certs, a free loopback
// port and the configurations of deploy/webhook pointed at it. It returns the
// flags to start the sync-controller with; from then on Applications cannot
// be created or updated until it serves (failurePolicy Fail), which
// WaitForWebhooks waits for.
func (e *Env) EnableWebhooks(ctx context.Context) ([]string, error) {
	dir := filepath.Join(e.Dir, "webhook-certs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	caBundle, err := controlplane.WebhookCertificates(dir)
	if err != nil {
		return nil, err
	}
	port, err := controlplane.FreePort()
	if err != nil {
		return nil, err
	}
	if err := controlplane.RegisterWebhooks(ctx, e.Client, e.Root, port, caBundle); err != nil {
		return nil, err
	}
	return []string{
		"--webhook-bind-address=" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		"--webhook-cert-path=" + dir,
	}, nil
}
