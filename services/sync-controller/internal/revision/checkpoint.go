package revision

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/ssa"
)

// record writes the owned parts of both statuses that changed since they
// were read or last written, then emits the Events they explain. The
// reconcile loop records at the end of every pass and at checkpoints, so a
// restarted controller resumes from status.
func (r *Reconciler) record(ctx context.Context, ro *rollout) error {
	ro.summarize()
	if ro.rev != nil {
		ro.rev.Status.ObservedGeneration = ro.rev.Generation
		if owned := ownedRevisionStatus(ro.rev); !equality.Semantic.DeepEqual(owned, ro.writtenRev) {
			if err := ssa.ApplyStatus(ctx, r.Client, ro.rev, syncv1.FieldManagerSync, owned); err != nil {
				return fmt.Errorf("recording status of Revision %s/%s: %w", ro.rev.Namespace, ro.rev.Name, err)
			}
			ro.writtenRev = owned
		}
	}
	if owned := ownedApplicationStatus(ro.app); !equality.Semantic.DeepEqual(owned, ro.writtenApp) {
		if err := ssa.ApplyStatus(ctx, r.Client, ro.app, syncv1.FieldManagerSync, owned); err != nil {
			return fmt.Errorf("recording status of Application %s/%s: %w", ro.app.Namespace, ro.app.Name, err)
		}
		ro.writtenApp = owned
	}
	r.emit(ro)
	return nil
}

// checkpoint records status in the middle of a phase, ahead of a step a
// restarted controller must know about. These are the write-ahead points
// the resumability of a rollout rests on:
//   - applyWaves records a wave's objects in the inventory before applying
//     them, so prune knows of every object that may exist even if the
//     controller stops mid-apply;
//   - applyWaves records a wave Applying once it is applied, so a restarted
//     controller watches it instead of applying it again;
//   - runHooks records how a hook ended before releasing its finalizer, so a
//     TTL that deletes it from then on cannot make it look deleted while
//     running.
func (r *Reconciler) checkpoint(ctx context.Context, ro *rollout) error {
	return r.record(ctx, ro)
}
