package revision

import "context"

// holdRollback keeps the Revision a rollback moved away from, once it is
// desired again, from rolling out until a newer desired state arrives.
func (r *Reconciler) holdRollback(_ context.Context, ro *rollout) (step, error) {
	if ro.App.Status.HeldRevision == ro.Rev.Name && ro.beforeRollout() {
		return halt, nil
	}
	return proceed, nil
}
