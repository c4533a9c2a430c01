package harness

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"github.com/kuvryn/kuvryn-sync/pkg/testkit/controlplane"
)

// EnableWebhooks prepares the admission webhooks for one more sync-controller
// replica: a serving certificate under Dir/webhook-certs (made once, shared
// by every replica), a free loopback port and the configurations of
// deploy/webhook pointed at it. It returns the flags to start the replica
// with; from then on Applications cannot be created or updated until it
// serves (failurePolicy Fail), which WaitForWebhooks waits for.
func (e *Env) EnableWebhooks(ctx context.Context) ([]string, error) {
	dir := filepath.Join(e.Dir, "webhook-certs")
	if e.webhookCA == nil {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		ca, err := controlplane.WebhookCertificates(dir)
		if err != nil {
			return nil, err
		}
		e.webhookCA = ca
	}
	port, err := controlplane.FreePort()
	if err != nil {
		return nil, err
	}
	if err := controlplane.RegisterWebhooks(ctx, e.Client, e.Root, port, e.webhookCA); err != nil {
		return nil, err
	}
	return []string{
		"--webhook-bind-address=" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		"--webhook-cert-path=" + dir,
	}, nil
}
