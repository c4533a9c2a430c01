// Package controller wires the source-controller's reconcilers and cache
// pruner into a manager.
package controller

import (
	"context"
	"path/filepath"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/eventrecorder"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/application"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/cachepruner"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/chart"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/gitrepo"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/preview"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/repository"
)

// DefaultConcurrent is --concurrent's default, chosen from `make bench-scale`
// (docs/benchmarks.md).
const DefaultConcurrent = 8

// Options are the source-controller's own flags.
type Options struct {
	// CacheDir holds the Git clones, checkouts and Helm charts.
	CacheDir string
	// Concurrent is how many Repositories are fetched, and how many
	// Applications rendered, at once.
	Concurrent int
}

// Setup adds the source-controller's controllers and cache pruner to mgr.
func Setup(ctx context.Context, mgr ctrl.Manager, o Options) error {
	git := &gitrepo.Cache{Dir: filepath.Join(o.CacheDir, "git")}
	charts := &chart.Puller{Dir: filepath.Join(o.CacheDir, "charts")}
	rec, err := eventrecorder.New(mgr, syncv1.FieldManagerSource)
	if err != nil {
		return err
	}
	previews := &preview.Reconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Git: git, Now: time.Now,
		Renderer: &application.Renderer{APIReader: mgr.GetAPIReader(), Git: git, Charts: charts},
	}
	if err := (&repository.Reconciler{
		Client: mgr.GetClient(), Repositories: mgr.GetCache(), APIReader: mgr.GetAPIReader(), Git: git, Events: rec,
		Concurrent: o.Concurrent, Previews: previews,
	}).SetupWithManager(mgr); err != nil {
		return err
	}
	if err := (&application.Reconciler{
		Client: mgr.GetClient(), Repositories: mgr.GetCache(), APIReader: mgr.GetAPIReader(), Git: git, Charts: charts, Events: rec,
		Concurrent: o.Concurrent,
	}).SetupWithManager(ctx, mgr); err != nil {
		return err
	}
	return mgr.Add(&cachepruner.Pruner{
		Client: mgr.GetClient(), Git: git, Charts: charts, Log: ctrl.Log.WithName("source-cache"),
	})
}
