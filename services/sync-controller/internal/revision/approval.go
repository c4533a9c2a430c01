package revision

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// markApproved records a manual approval (or a rollback request, its own
// approval) of a planned Revision about to start: phase Approved, Approved
// True naming who approved which plan, and AwaitingApproval False, so that
// neither the Revision nor its Application still asks for an approval once
// the rollout has started or finished.
func (ro *rollout) markApproved() {
	rec := ro.rollback
	if rec == nil && !ro.App.Spec.Sync.Automatic {
		rec = ro.approvalRequest()
	}
	switch ro.Rev.Status.Phase {
	case syncv1.PhasePlanned, syncv1.PhaseAwaitingApproval, syncv1.PhaseApproved:
	default:
		return
	}
	if rec == nil {
		return
	}
	ro.Rev.Status.Phase = syncv1.PhaseApproved
	message := fmt.Sprintf("Revision %s: plan %s approved by %s at %s", ro.Rev.Name, rec.Digest, rec.By, rec.At.UTC().Format(time.RFC3339))
	if rec.Rollback {
		message = fmt.Sprintf("Revision %s: rollback requested by %s at %s", ro.Rev.Name, rec.By, rec.At.UTC().Format(time.RFC3339))
	}
	ro.setRevCondition(syncv1.ConditionApproved, metav1.ConditionTrue, syncv1.ReasonApproved, message)
	if meta.FindStatusCondition(ro.Rev.Status.Conditions, syncv1.ConditionAwaitingApproval) != nil {
		ro.setRevCondition(syncv1.ConditionAwaitingApproval, metav1.ConditionFalse, syncv1.ReasonApproved, message)
	}
}

// approved reports whether the desired Revision may start a rollout now.
func (ro *rollout) approved() bool {
	if ro.App.Spec.Sync.Automatic || ro.rollback != nil {
		return true
	}
	rec := ro.approvalRequest()
	return rec != nil && ro.Rev.Status.Plan != nil && rec.Digest == ro.Rev.Status.Plan.Digest && !ro.approvalUsed(rec)
}

// approvalPending reports whether a manual Application's approval of this
// Revision waits to be checked against the current plan.
func (ro *rollout) approvalPending() bool {
	if ro.App.Spec.Sync.Automatic || ro.rollback != nil {
		return false
	}
	rec := ro.approvalRequest()
	return rec != nil && !ro.approvalUsed(rec)
}

// approvalRequest is the approval the admission webhook recorded on the
// Application for this Revision, or nil if there is none.
func (ro *rollout) approvalRequest() *syncv1.ApprovalRecord {
	a := ro.App.Annotations
	if a[syncv1.ApprovedRevisionAnnotation] != ro.Rev.Name || a[syncv1.ApprovedDigestAnnotation] == "" {
		return nil
	}
	at, err := time.Parse(time.RFC3339, a[syncv1.ApprovedAtAnnotation])
	if err != nil {
		return nil
	}
	return &syncv1.ApprovalRecord{
		Revision: ro.Rev.Name,
		By:       a[syncv1.ApprovedByAnnotation],
		At:       metav1.NewTime(at),
		Digest:   a[syncv1.ApprovedDigestAnnotation],
	}
}

// approvalUsed reports whether an earlier attempt of this Revision already
// rolled out under rec: one approval covers one rollout, so a later one
// (self-heal, a retry) needs a fresh approval.
func (ro *rollout) approvalUsed(rec *syncv1.ApprovalRecord) bool {
	used := ro.Rev.Status.Approval
	return used != nil && used.By == rec.By && used.Digest == rec.Digest && used.At.Equal(&rec.At)
}
