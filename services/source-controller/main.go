// Command source-controller fetches Repositories, renders Applications into
// Revisions and discovers Applications from .ksync.yaml files.
package main

import (
	"context"
	"flag"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"

	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/application"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/controller"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/repository"
)

func main() {
	var o controller.Options
	manager.Main(manager.Service{
		Name:          "source-controller",
		Flags:         func(fs *flag.FlagSet) { bindFlags(fs, &o) },
		CacheByObject: map[client.Object]cache.ByObject{&syncv1.Revision{}: application.RevisionCache()},
		// Repositories are watched unstructured (see repository.Unstructured).
		Sharded: []client.Object{repository.Unstructured(), &syncv1.Application{}, &syncv1.Revision{}},
	},
		func(mgr ctrl.Manager) error {
			if err := validate(o); err != nil {
				return err
			}
			return controller.Setup(context.Background(), mgr, o)
		})
}

// bindFlags registers the source-controller's own flags on fs, writing into o.
func bindFlags(fs *flag.FlagSet, o *controller.Options) {
	fs.StringVar(&o.CacheDir, "source-cache-dir", "/tmp/kuvryn-sync-source-cache",
		"Directory of the Git clones, checkouts and Helm charts this replica caches.")
	fs.IntVar(&o.Concurrent, "concurrent", controller.DefaultConcurrent,
		"How many Repositories are fetched, and how many Applications rendered, at once.")
}

// validate refuses flag values the flag package accepts but the controller
// cannot use.
func validate(o controller.Options) error {
	if o.Concurrent < 1 {
		return fmt.Errorf("--concurrent %d: must be at least 1", o.Concurrent)
	}
	return nil
}
