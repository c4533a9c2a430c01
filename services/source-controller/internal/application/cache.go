package application

import (
	"sigs.k8s.io/controller-runtime/pkg/cache"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// RevisionCache is how the source-controller caches Revisions: their spec,
// which holds all it reads of them (where each was rendered from), without
// the status the sync-controller records of each rollout (plan, hooks,
// waves, inventory, diagnosis). That status was most of a Revision's size,
// and 1000 Applications keep several Revisions each (docs/benchmarks.md).
func RevisionCache() cache.ByObject {
	return cache.ByObject{Transform: func(in any) (any, error) {
		if rev, ok := in.(*syncv1.Revision); ok {
			rev.Status = syncv1.RevisionStatus{}
		}
		return in, nil
	}}
}
