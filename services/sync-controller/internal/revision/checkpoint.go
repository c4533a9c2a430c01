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
// reconcile loop records at the end of every pass, so the Application's
// status is written at most once per pass.
func (r *Reconciler) record(ctx context.Context, ro *rollout) error {
	if ro.unrecorded {
		return nil
	}
	ro.summarize()
	if err := r.recordRevision(ctx, ro); err != nil {
		return err
	}
	if owned := ownedApplicationStatus(ro.App); !equality.Semantic.DeepEqual(owned, ro.writtenApp) {
		if err := ssa.ApplyStatus(ctx, r.Client, ro.App, syncv1.FieldManagerSync, owned); err != nil {
			return fmt.Errorf("recording status of Application %s/%s: %w", ro.App.Namespace, ro.App.Name, err)
		}
		r.wrote(ro.App)
		ro.writtenApp = owned
	}
	r.emit(ro)
	return nil
}

// recordRevision writes the owned part of the Revision's status if it
// changed since it was read or last written. The sync-controller is the
// only writer of a Revision's status, so the write is a merge patch of what
// changed, which costs the API server less than an apply of the whole
// status (docs/benchmarks.md, "A status write"); the Application's status,
// whose conditions two controllers share, is applied.
func (r *Reconciler) recordRevision(ctx context.Context, ro *rollout) error {
	if ro.Rev == nil {
		return nil
	}
	ro.Rev.Status.ObservedGeneration = ro.Rev.Generation
	owned := ownedRevisionStatus(ro.Rev)
	if equality.Semantic.DeepEqual(owned, ro.writtenRev) {
		return nil
	}
	if err := ssa.MergeStatus(ctx, r.Client, ro.Rev, syncv1.FieldManagerSync, ro.writtenRev, owned); err != nil {
		return fmt.Errorf("recording status of Revision %s/%s: %w", ro.Rev.Namespace, ro.Rev.Name, err)
	}
	r.wrote(ro.Rev)
	ro.writtenRev = owned
	return nil
}

// checkpoint records the Revision's status in the middle of a phase, ahead
// of a step a restarted controller must know about. The Revision's status
// is the rollout's only write-ahead record (DESIGN.md section 4): the
// Application's follows at the end of the pass, and a restarted controller
// brings it up to the Revision's first (catch_up.go). These are the
// write-ahead points the resumability of a rollout rests on:
//   - the attempt is on record before it changes the cluster
//     (recordAttempt), so a restarted controller resumes it instead of
//     starting it again and taking its hooks for an earlier attempt's;
//   - applyWaves records a wave Applying, its objects in the inventory,
//     before applying them, so prune knows of every object that may exist
//     even if the controller stops mid-apply;
//   - runHooks records how a hook ended before releasing its finalizer, so a
//     TTL that deletes it from then on cannot make it look deleted while
//     running.
//
// A wave recorded Applying is applied again by a controller that does not
// remember applying it (memory.AppliedWaves), which Server-Side Apply of
// unchanged objects makes a no-op; recording it Applying in the
// inventory's write instead of after the apply saves one of the most
// frequent requests of a large rollout. Events wait for the end of the
// pass, with the Application's status that explains them.
func (r *Reconciler) checkpoint(ctx context.Context, ro *rollout) error {
	if ro.unrecorded {
		return nil
	}
	return r.recordRevision(ctx, ro)
}

// recordAttempt checkpoints if the attempt under way is not on record yet.
// startRollout begins an attempt in memory only, so that its record and the
// first wave's inventory, both due before anything is applied, are one
// write.
func (r *Reconciler) recordAttempt(ctx context.Context, ro *rollout) error {
	if ro.writtenRev != nil && ro.writtenRev.Attempt == ro.Rev.Status.Attempt {
		return nil
	}
	return r.checkpoint(ctx, ro)
}
