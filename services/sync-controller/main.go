// Command sync-controller plans Revisions, guards approvals with its
// admission webhook, rolls out hooks and waves, prunes, and watches health
// and drift.
package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/revision"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/webhook"
)

// concurrentReconciles is how many Applications roll out at once.
const concurrentReconciles = 4

func main() {
	o := revision.Options{MaxConcurrentReconciles: concurrentReconciles}
	flags := func(fs *flag.FlagSet) {
		fs.StringVar(&o.DefaultServiceAccount, "default-service-account", "",
			"Service account for Applications that set none; empty refuses them.")
		fs.DurationVar(&o.DriftResyncInterval, "drift-resync-interval", 5*time.Minute,
			"Drift re-check for Applications with unwatched kinds, and health re-check for unhealthy ones; 0 disables the drift re-check.")
		fs.DurationVar(&o.RetryInterval, "retry-interval", 30*time.Second,
			"Wait before an automatic Application retries a failed attempt, doubled for each further failure in a row up to 10m; 0 disables retries.")
	}
	manager.Main(manager.Service{Name: "sync-controller", Flags: flags}, func(mgr ctrl.Manager) error {
		if o.DriftResyncInterval < 0 {
			return fmt.Errorf("--drift-resync-interval %s is negative; use 0 to disable the drift re-check", o.DriftResyncInterval)
		}
		if o.RetryInterval < 0 {
			return fmt.Errorf("--retry-interval %s is negative; use 0 to disable retries", o.RetryInterval)
		}
		if err := webhook.Setup(mgr, mgr.GetAPIReader()); err != nil {
			return err
		}
		return revision.New(mgr, o).SetupWithManager(context.Background(), mgr)
	})
}
