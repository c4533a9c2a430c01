// Command image-controller scans registries for ImagePolicies and commits
// the selected images back to Git.
package main

import (
	"flag"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/services/image-controller/internal/controller"
)

func main() {
	var o controller.Options
	manager.Main(manager.Service{
		Name: "image-controller",
		Flags: func(fs *flag.FlagSet) {
			fs.BoolVar(&o.WriteBack, controller.WriteBackFlag, true,
				"Commit the images ImagePolicies select to the Git branches of Repositories with spec.imageUpdate; "+
					"false reports ImagesUpdated False with reason Disabled.")
			fs.Float64Var(&o.RegistryQPS, "registry-qps", 5, "Requests per second sent to one registry host.")
			fs.IntVar(&o.RegistryBurst, "registry-burst", 10, "Requests one registry host may receive at once before --registry-qps applies.")
		},
	}, func(mgr ctrl.Manager) error { return controller.Setup(mgr, o) })
}
