package revision

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// awaitApproval lets a planned Revision of an automatic Application start,
// and stops one of a manual Application in AwaitingApproval, applying
// nothing, until it is approved.
func (r *Reconciler) awaitApproval(_ context.Context, ro *rollout) (step, error) {
	if !ro.beforeRollout() || ro.approved() {
		return proceed, nil
	}
	if ro.rev.Status.Phase == syncv1.PhaseFailed || ro.rev.Status.Plan == nil {
		return halt, nil
	}
	ro.rev.Status.Phase = syncv1.PhaseAwaitingApproval
	message := fmt.Sprintf("Revision %s waits for approval of plan %s: run `ksync approve %s -n %s`",
		ro.rev.Name, ro.rev.Status.Plan.Digest, ro.app.Name, ro.app.Namespace)
	if ro.setRevCondition(syncv1.ConditionAwaitingApproval, metav1.ConditionTrue, syncv1.ReasonAwaitingApproval, message) {
		ro.normal(syncv1.ReasonAwaitingApproval, actionApprove, "%s", message)
	}
	return halt, nil
}
