// Command sync-controller plans Revisions, preview Revisions included,
// guards approvals with its admission webhook, rolls out hooks and waves,
// prunes, and watches health and drift.
package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/planner"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/preview"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/revision"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/webhook"
)

// defaultConcurrent is --concurrent's default, chosen from `make bench-scale`
// (docs/benchmarks.md).
const defaultConcurrent = 16

func main() {
	var o revision.Options
	manager.Main(manager.Service{
		Name:    "sync-controller",
		Flags:   func(fs *flag.FlagSet) { bindFlags(fs, &o) },
		Sharded: []client.Object{&syncv1.Application{}, &syncv1.Revision{}},
	}, func(mgr ctrl.Manager) error {
		if err := validate(o); err != nil {
			return err
		}
		if err := webhook.Setup(mgr, mgr.GetAPIReader()); err != nil {
			return err
		}
		if err := preview.New(mgr, o.DefaultServiceAccount, o.HandEditManagers).SetupWithManager(mgr); err != nil {
			return err
		}
		return revision.New(mgr, o).SetupWithManager(context.Background(), mgr)
	})
}

// validate refuses flag values the flag package accepts but the controller
// cannot use.
func validate(o revision.Options) error {
	if o.MaxConcurrentReconciles < 1 {
		return fmt.Errorf("--concurrent %d: must be at least 1", o.MaxConcurrentReconciles)
	}
	if o.DriftResyncInterval < 0 {
		return fmt.Errorf("--drift-resync-interval %s is negative; use 0 to disable the drift re-check", o.DriftResyncInterval)
	}
	if o.RetryInterval < 0 {
		return fmt.Errorf("--retry-interval %s is negative; use 0 to disable retries", o.RetryInterval)
	}
	return nil
}

// bindFlags registers the sync-controller's own flags on fs, writing into o.
func bindFlags(fs *flag.FlagSet, o *revision.Options) {
	fs.IntVar(&o.MaxConcurrentReconciles, "concurrent", defaultConcurrent, "How many Applications are planned and rolled out at once.")
	fs.StringVar(&o.DefaultServiceAccount, "default-service-account", "",
		"Service account for Applications that set none; empty refuses them.")
	fs.DurationVar(&o.DriftResyncInterval, "drift-resync-interval", 5*time.Minute,
		"Drift re-check for Applications with unwatched kinds, and health re-check for unhealthy ones; 0 disables the drift re-check.")
	fs.DurationVar(&o.RetryInterval, "retry-interval", 30*time.Second,
		"Wait before an automatic Application retries a failed attempt, doubled for each further failure in a row up to 10m; 0 disables retries.")
	o.HandEditManagers = slices.Clone(planner.DefaultHandEditManagers)
	fs.Func("hand-edit-field-managers",
		"Comma-separated field managers whose fields are taken back as edits made by hand, by a manual Application only in its approved rollout; empty takes back none. (default \""+
			strings.Join(planner.DefaultHandEditManagers, ",")+"\")",
		func(s string) error {
			managers, err := parseManagers(s)
			if err != nil {
				return err
			}
			o.HandEditManagers = managers
			return nil
		})
}

// parseManagers reads a comma-separated list of field managers. The
// controllers' own managers are refused: taking back fields from another
// Kuvryn Sync service would fight it, and kuvryn-sync's own are already its.
func parseManagers(s string) ([]string, error) {
	managers := []string{}
	if strings.TrimSpace(s) == "" {
		return managers, nil
	}
	own := []string{syncv1.FieldManagerSync, syncv1.FieldManagerSource, syncv1.FieldManagerImage, syncv1.FieldManagerNotify, syncv1.FieldManagerWeb}
	for i, m := range strings.Split(s, ",") {
		m = strings.TrimSpace(m)
		switch {
		case m == "":
			return nil, fmt.Errorf("entry %d is empty; separate field managers with single commas", i+1)
		case slices.Contains(own, m):
			return nil, fmt.Errorf("entry %d %q is a Kuvryn Sync field manager, not one people edit with", i+1, m)
		case slices.Contains(managers, m):
			return nil, fmt.Errorf("entry %d %q is listed twice", i+1, m)
		}
		managers = append(managers, m)
	}
	return managers, nil
}
