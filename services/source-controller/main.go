// Command source-controller fetches Repositories, renders Applications into
// Revisions and discovers Applications from .ksync.yaml files.
package main

import (
	"context"
	"flag"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/controller"
)

func main() {
	var cacheDir string
	manager.Main(manager.Service{
		Name: "source-controller",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&cacheDir, "source-cache-dir", "/tmp/kuvryn-sync-source-cache",
				"Directory of the Git clones, checkouts and Helm charts this replica caches.")
		},
	}, func(mgr ctrl.Manager) error { return controller.Setup(context.Background(), mgr, cacheDir) })
}
