package revision

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/planner"
)

// failedAt is the step of the lifecycle a failure stopped, which decides
// what fail records.
type failedAt int

const (
	// atRender: the commit failed to render, as the source-controller
	// recorded in the Revision's spec; there is nothing to plan or apply,
	// and the deployed Revision stays. The source-controller's Event
	// explains it.
	atRender failedAt = iota
	// atServiceAccount: no service account may act for the Application. The
	// Revision is refused, not failed: it waits until the account exists.
	atServiceAccount
	// atPlan: the Revision could not be planned; nothing was applied.
	atPlan
	// atStart: the attempt could not begin; nothing of it was applied.
	atStart
	// inRollout: the attempt under way failed; its later groups do not run.
	inRollout
)

// fail records f, which stopped the desired Revision at the given step, in
// its status and the Application's history, and queues the Warning Event
// that explains it (but for a render failure, which the source-controller
// explains). It is the only way a Revision fails; phases and their
// helpers return failures as errors and the phase that gets one calls fail.
func (ro *rollout) fail(at failedAt, f *planner.Failure) {
	switch at {
	case atRender:
		ro.blocked = f
		// Recorded once: the Revision's one status write for the failure.
		if ro.Rev.Status.Phase != syncv1.PhaseFailed || meta.FindStatusCondition(ro.Rev.Status.Conditions, syncv1.ConditionRendered) == nil {
			ro.Rev.Status.Phase = syncv1.PhaseFailed
			ro.setRevCondition(syncv1.ConditionRendered, metav1.ConditionFalse, f.Reason, f.Message)
		}
		if h := ro.App.Status.History; len(h) == 0 || h[0].Revision != ro.Rev.Name {
			ro.startHistory()
			ro.finishHistory(syncv1.PhaseFailed, f.Reason)
		}
	case atServiceAccount:
		ro.blocked = f
		if ro.beforeRollout() && ro.setRevCondition(syncv1.ConditionPlanned, metav1.ConditionFalse, f.Reason, f.Message) {
			ro.warning(f.Reason, actionPlan, "%s", f.Message)
		}
	case atPlan:
		ro.Rev.Status.Phase = syncv1.PhaseFailed
		if ro.setRevCondition(syncv1.ConditionPlanned, metav1.ConditionFalse, f.Reason, f.Message) {
			ro.warning(f.Reason, actionPlan, "Revision %s: %s", ro.Rev.Name, f.Message)
		}
	case atStart:
		ro.Rev.Status.Phase = syncv1.PhaseFailed
		if ro.setRevCondition(syncv1.ConditionRolloutComplete, metav1.ConditionFalse, f.Reason, f.Message) {
			ro.warning(f.Reason, actionRollout, "Revision %s: %s", ro.Rev.Name, f.Message)
		}
	case inRollout:
		ro.Rev.Status.Phase = syncv1.PhaseFailed
		ro.setRevCondition(syncv1.ConditionRolloutComplete, metav1.ConditionFalse, f.Reason, f.Message)
		for i := range ro.Rev.Status.Waves {
			if ro.Rev.Status.Waves[i].State == syncv1.WaveApplying {
				ro.Rev.Status.Waves[i].State = syncv1.WaveFailed
			}
		}
		ro.finishHistory(syncv1.PhaseFailed, f.Reason)
		ro.warning(f.Reason, actionRollout, "Revision %s attempt %d failed: %s", ro.Rev.Name, ro.Rev.Status.Attempt, f.Message)
	}
}
