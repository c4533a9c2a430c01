package revision

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/planner"
)

// planRevision computes the plan of a desired Revision that has none for its next
// attempt: a Server-Side Apply dry-run of every object as the service
// account, compared with live state, plus the deletes prune would make.
func (r *Reconciler) planRevision(ctx context.Context, ro *rollout) (step, error) {
	if !ro.beforeRollout() {
		return proceed, nil
	}
	switch ro.Rev.Status.Phase {
	case syncv1.PhasePlanned, syncv1.PhaseAwaitingApproval, syncv1.PhaseApproved:
		// An approval is checked against a fresh plan, so that one given
		// before desired or live state changed is found stale.
		if ro.Rev.Status.Plan != nil && !ro.approvalPending() {
			return proceed, nil
		}
	}
	p, err := r.computePlan(ctx, ro)
	if errors.Is(err, planner.ErrDesiredStateMissing) {
		ro.setRevCondition(syncv1.ConditionPlanned, metav1.ConditionUnknown, syncv1.ReasonProgressing, "waiting for "+err.Error())
		return waitFor(pollInterval), nil
	}
	if f, ok := planner.AsFailure(err); ok {
		ro.fail(atPlan, f)
		if f.Reason == syncv1.ReasonValidationFailure {
			// The desired state never changes, so planning again cannot help.
			return halt, nil
		}
		return waitFor(dependencyRetry), nil
	}
	if err != nil {
		ro.setRevCondition(syncv1.ConditionPlanned, metav1.ConditionUnknown, syncv1.ReasonProgressing,
			fmt.Sprintf("planning Revision %s: %v", ro.Rev.Name, err))
		return halt, err
	}
	ro.Rev.Status.Plan = &p
	ro.Rev.Status.Phase = syncv1.PhasePlanned
	ro.setRevCondition(syncv1.ConditionPlanned, metav1.ConditionTrue, syncv1.ReasonSucceeded, planner.Summary(&p))
	return proceed, nil
}
