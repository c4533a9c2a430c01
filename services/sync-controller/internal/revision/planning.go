package revision

import (
	"context"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/plan"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/planner"
)

// plans is the planner of the Reconciler's rollouts. It keeps nothing but
// what the Reconciler does, so it is made for each use.
func (r *Reconciler) plans() *planner.Planner {
	return &planner.Planner{
		Cache:            r.Client,
		APIReader:        r.APIReader,
		Mapper:           r.Mapper,
		HandEditManagers: r.Options.HandEditManagers,
		Absent:           r.absent,
		DesiredStates:    &r.desiredStates,
	}
}

// computePlan plans every object of ro's desired state (planner.Plan),
// recording what it took back by hand.
func (r *Reconciler) computePlan(ctx context.Context, ro *rollout) (syncv1.Plan, error) {
	p, err := r.plans().Plan(ctx, &ro.Scope)
	ro.recordPlannedHandEdits()
	return p, err
}

// planEntries plans the waves' objects and, with hooks, the hooks and the
// deletes prune would make (planner.Entries), recording what it took back
// by hand.
func (r *Reconciler) planEntries(ctx context.Context, ro *rollout, withHooksAndDeletes bool) ([]plan.Entry, error) {
	entries, err := r.plans().Entries(ctx, &ro.Scope, withHooksAndDeletes)
	ro.recordPlannedHandEdits()
	return entries, err
}

// recordPlannedHandEdits records, in the order of the objects, the
// hand-edited fields the last plan took back or, for a manual Application,
// that its rollout takes back.
func (ro *rollout) recordPlannedHandEdits() {
	for _, h := range ro.HandEdits {
		ro.recordHandEdits(h.ID, h.Fields, !ro.App.Spec.Sync.Automatic)
	}
	ro.HandEdits = nil
}
