package revision

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/planner"
)

// prune deletes, as the service account, the objects earlier attempts
// applied that left the desired state. With spec.sync.prune false it keeps
// them and says so in one PruneSkipped Warning Event. Either way the
// RolloutComplete reason records that prune ran, so a restarted controller
// neither deletes again nor repeats the Event in this attempt.
func (r *Reconciler) prune(ctx context.Context, ro *rollout) (step, error) {
	if !ro.rolling() || ro.pruned() {
		return proceed, nil
	}
	ds, err := r.plans().LoadDesired(ctx, &ro.Scope)
	if err != nil {
		return halt, err
	}
	stale, err := r.plans().PruneCandidates(ctx, &ro.Scope, ds)
	if err != nil {
		if f, ok := planner.AsFailure(err); ok {
			ro.fail(inRollout, &planner.Failure{Reason: f.Reason, Message: "prune: " + f.Message})
			return proceed, nil
		}
		return halt, err
	}
	attempt := ro.Rev.Status.Attempt
	if !ro.PruneEnabled() {
		if len(stale) == 0 {
			ro.setRevCondition(syncv1.ConditionRolloutComplete, metav1.ConditionFalse, syncv1.ReasonPruned,
				fmt.Sprintf("attempt %d: nothing to prune", attempt))
			return proceed, nil
		}
		names := planner.NameObjects(stale)
		ro.setRevCondition(syncv1.ConditionRolloutComplete, metav1.ConditionFalse, syncv1.ReasonPruneSkipped,
			fmt.Sprintf("attempt %d: spec.sync.prune is false; kept %d object(s) no longer in desired state: %s", attempt, len(stale), names))
		ro.warning(syncv1.ReasonPruneSkipped, actionPrune,
			"Revision %s leaves %d object(s) out of desired state; spec.sync.prune is false, so they were kept: %s",
			ro.Rev.Name, len(stale), names)
		return proceed, nil
	}
	if len(stale) > 0 {
		if err := r.recordAttempt(ctx, ro); err != nil {
			return halt, err
		}
	}
	for _, live := range stale {
		err := deleteObject(ctx, ro.Client, live)
		if err == nil {
			continue
		}
		if f, ok := planner.AsFailure(planner.FailureOf(live, "prune", err, syncv1.ReasonApplyFailed)); ok {
			ro.fail(inRollout, f)
			return proceed, nil
		}
		return halt, fmt.Errorf("pruning %s: %w", planner.IDOf(live), err)
	}
	message := fmt.Sprintf("attempt %d: nothing to prune", attempt)
	if len(stale) > 0 {
		message = fmt.Sprintf("attempt %d: pruned %d object(s): %s", attempt, len(stale), planner.NameObjects(stale))
		ro.normal(syncv1.ReasonPruned, actionPrune, "Revision %s: pruned %d object(s) no longer in desired state: %s",
			ro.Rev.Name, len(stale), planner.NameObjects(stale))
	}
	ro.setRevCondition(syncv1.ConditionRolloutComplete, metav1.ConditionFalse, syncv1.ReasonPruned, message)
	return proceed, nil
}
