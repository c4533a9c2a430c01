// Command image-controller scans registries for ImagePolicies and commits
// the selected images back to Git.
package main

import (
	"flag"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/services/image-controller/internal/controller"
)

func main() {
	var o controller.Options
	manager.Main(manager.Service{
		Name: "image-controller",
		// An ImagePolicy is in the shard of the Repositories whose markers
		// use it: the write-back reads the policies of its own shard.
		Sharded: []client.Object{&syncv1.Repository{}, &syncv1.ImagePolicy{}},
		Flags: func(fs *flag.FlagSet) {
			fs.BoolVar(&o.WriteBack, controller.WriteBackFlag, true,
				"Commit the images ImagePolicies select to the Git branches of Repositories with spec.imageUpdate; "+
					"false reports ImagesUpdated False with reason Disabled.")
			fs.Float64Var(&o.RegistryQPS, "registry-qps", 5, "Requests per second sent to one registry host.")
			fs.IntVar(&o.RegistryBurst, "registry-burst", 10, "Requests one registry host may receive at once before --registry-qps applies.")
		},
	}, func(mgr ctrl.Manager) error { return controller.Setup(mgr, o) })
}
