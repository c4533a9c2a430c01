package preview

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/controlplane"
)

// The suite runs one API server (etcd and kube-apiserver: a plan only
// dry-runs, so nothing needs to schedule or run). Each test works in its
// own namespace with its own manager, whose cache sees only that namespace.
var (
	cp    *controlplane.ControlPlane
	admin client.Client
)

// timeout bounds every wait; the machine is slow and shared, so it is generous.
const timeout = 2 * time.Minute

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	var err error
	cp, err = controlplane.Start(ctx, controlplane.Options{})
	if err == nil {
		admin, err = client.New(cp.Config, client.Options{Scheme: manager.Scheme()})
	}
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting control plane:", err)
		if cp != nil {
			_ = cp.Stop()
		}
		os.Exit(1)
	}
	code := m.Run()
	if err := cp.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping control plane:", err)
	}
	os.Exit(code)
}
