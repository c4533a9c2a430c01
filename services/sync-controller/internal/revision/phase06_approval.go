package revision

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// awaitApproval lets a planned Revision of an automatic Application start.
// A manual Application's Revision starts only while its approval names this
// Revision and its current plan digest and was not used by an earlier
// attempt; otherwise it waits in AwaitingApproval, applying nothing, and an
// approval whose plan changed since is reported as ApprovalStale.
func (r *Reconciler) awaitApproval(_ context.Context, ro *rollout) (step, error) {
	if !ro.beforeRollout() {
		return proceed, nil
	}
	if ro.approved() {
		ro.markApproved()
		return proceed, nil
	}
	if ro.Rev.Status.Phase == syncv1.PhaseFailed || ro.Rev.Status.Plan == nil {
		return halt, nil
	}
	ro.Rev.Status.Phase = syncv1.PhaseAwaitingApproval
	digest := ro.Rev.Status.Plan.Digest
	if rec := ro.approvalRequest(); rec != nil && rec.Digest != digest && !ro.approvalUsed(rec) {
		message := fmt.Sprintf("Revision %s: the approval by %s of plan %s is stale: desired or live state changed and the plan is now %s; approve again with `%s`",
			ro.Rev.Name, rec.By, rec.Digest, digest, ro.App.ApproveCommand(ro.Rev.Name))
		if ro.setRevCondition(syncv1.ConditionAwaitingApproval, metav1.ConditionTrue, syncv1.ReasonApprovalStale, message) {
			ro.warning(syncv1.ReasonApprovalStale, actionApprove, "%s", message)
		}
		return halt, nil
	}
	message := fmt.Sprintf("Revision %s waits for approval of plan %s: run `%s`",
		ro.Rev.Name, digest, ro.App.ApproveCommand(ro.Rev.Name))
	if ro.setRevCondition(syncv1.ConditionAwaitingApproval, metav1.ConditionTrue, syncv1.ReasonAwaitingApproval, message) {
		ro.normal(syncv1.ReasonAwaitingApproval, actionApprove, "%s", message)
	}
	return halt, nil
}
