package revision

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/ssa"
)

// supersede ends what the previous desired Revision left open: an attempt
// still rolling out, or a plan waiting to start.
func (r *Reconciler) supersede(ctx context.Context, ro *rollout) (step, error) {
	h := ro.App.Status.History
	if len(h) > 0 && h[0].Result == syncv1.PhaseApplying && h[0].Revision != ro.Rev.Name {
		if err := r.supersedeRevision(ctx, ro, h[0].Revision); err != nil {
			return halt, err
		}
		h[0].Result = syncv1.PhaseSuperseded
		h[0].Reason = syncv1.ReasonSuperseded
		h[0].FinishedAt = ro.Now.DeepCopy()
	}
	revs, err := r.revisionsOf(ctx, ro.App)
	if err != nil {
		return halt, err
	}
	for _, rev := range revs {
		switch rev.Status.Phase {
		case syncv1.PhasePlanned, syncv1.PhaseAwaitingApproval, syncv1.PhaseApproved:
			if rev.Name != ro.Rev.Name {
				if err := r.supersedeRevision(ctx, ro, rev.Name); err != nil {
					return halt, err
				}
			}
		}
	}
	return proceed, nil
}

// supersedeRevision marks an earlier Revision Superseded by the desired one.
func (r *Reconciler) supersedeRevision(ctx context.Context, ro *rollout, name string) error {
	old, err := r.readRevision(ctx, ro.App.Namespace, name)
	if err != nil {
		return client.IgnoreNotFound(err)
	}
	wasRolling := old.Status.Phase == syncv1.PhaseApplying
	switch old.Status.Phase {
	case syncv1.PhaseApplying, syncv1.PhasePlanned, syncv1.PhaseAwaitingApproval, syncv1.PhaseApproved:
	default:
		return nil
	}
	written := ownedRevisionStatus(old)
	message := fmt.Sprintf("superseded by Revision %s", ro.Rev.Name)
	old.Status.Phase = syncv1.PhaseSuperseded
	if wasRolling {
		setCondition(&old.Status.Conditions, old.Generation, syncv1.ConditionRolloutComplete,
			metav1.ConditionFalse, syncv1.ReasonSuperseded, message+" before its rollout completed")
	}
	if meta.IsStatusConditionTrue(old.Status.Conditions, syncv1.ConditionAwaitingApproval) {
		setCondition(&old.Status.Conditions, old.Generation, syncv1.ConditionAwaitingApproval,
			metav1.ConditionFalse, syncv1.ReasonSuperseded, message)
	}
	if err := r.writeRevisionStatus(ctx, old, written); err != nil {
		return err
	}
	ro.normal(syncv1.ReasonSuperseded, actionRollout, "Revision %s %s", name, message)
	// The guide: a desired state that changed before the rollout started
	// makes the approval stale; the new Revision needs its own.
	if a := ro.App.Annotations; !wasRolling && a[syncv1.ApprovedRevisionAnnotation] == name {
		ro.warning(syncv1.ReasonApprovalStale, actionApprove,
			"approval of Revision %s by %s is stale: a newer desired state, Revision %s, arrived before its rollout started; approve Revision %s to roll it out",
			name, a[syncv1.ApprovedByAnnotation], ro.Rev.Name, ro.Rev.Name)
	}
	return nil
}

// writeRevisionStatus writes the owned status of a Revision other than the
// desired one, changed from written as read.
func (r *Reconciler) writeRevisionStatus(ctx context.Context, rev *syncv1.Revision, written *syncv1.RevisionStatus) error {
	if err := ssa.MergeStatus(ctx, r.Client, rev, syncv1.FieldManagerSync, written, ownedRevisionStatus(rev)); err != nil {
		return fmt.Errorf("recording status of Revision %s/%s: %w", rev.Namespace, rev.Name, err)
	}
	r.wrote(rev)
	return nil
}
