package revision

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// failedAt is the step of the lifecycle a failure stopped, which decides
// what fail records.
type failedAt int

const (
	// atRender: the commit failed to render, as the source-controller
	// recorded; there is nothing to plan or apply, and the deployed
	// Revision stays. The source-controller's Event explains it.
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
func (ro *rollout) fail(at failedAt, f *failure) {
	switch at {
	case atRender:
		ro.blocked = f
		if h := ro.app.Status.History; len(h) == 0 || h[0].Revision != ro.rev.Name {
			ro.startHistory()
			ro.finishHistory(syncv1.PhaseFailed, f.reason)
		}
	case atServiceAccount:
		ro.blocked = f
		if ro.beforeRollout() && ro.setRevCondition(syncv1.ConditionPlanned, metav1.ConditionFalse, f.reason, f.message) {
			ro.warning(f.reason, actionPlan, "%s", f.message)
		}
	case atPlan:
		ro.rev.Status.Phase = syncv1.PhaseFailed
		if ro.setRevCondition(syncv1.ConditionPlanned, metav1.ConditionFalse, f.reason, f.message) {
			ro.warning(f.reason, actionPlan, "Revision %s: %s", ro.rev.Name, f.message)
		}
	case atStart:
		ro.rev.Status.Phase = syncv1.PhaseFailed
		if ro.setRevCondition(syncv1.ConditionRolloutComplete, metav1.ConditionFalse, f.reason, f.message) {
			ro.warning(f.reason, actionRollout, "Revision %s: %s", ro.rev.Name, f.message)
		}
	case inRollout:
		ro.rev.Status.Phase = syncv1.PhaseFailed
		ro.setRevCondition(syncv1.ConditionRolloutComplete, metav1.ConditionFalse, f.reason, f.message)
		for i := range ro.rev.Status.Waves {
			if ro.rev.Status.Waves[i].State == syncv1.WaveApplying {
				ro.rev.Status.Waves[i].State = syncv1.WaveFailed
			}
		}
		ro.finishHistory(syncv1.PhaseFailed, f.reason)
		ro.warning(f.reason, actionRollout, "Revision %s attempt %d failed: %s", ro.rev.Name, ro.rev.Status.Attempt, f.message)
	}
}
