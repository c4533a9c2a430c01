package revision

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/ssa"
)

// summarize derives the Application's phase, sync state and conditions from
// the desired Revision, so they are computed in one place.
func (ro *rollout) summarize() {
	app := &ro.App.Status
	app.ObservedGeneration = ro.App.Generation
	if ro.Rev == nil {
		app.Sync = syncv1.SyncStateUnknown
		message := "waiting for the source-controller to render a desired Revision"
		if name := ro.App.Status.DesiredRevision; name != "" {
			message = fmt.Sprintf("waiting for the desired Revision %s to exist", name)
		} else {
			app.Phase = ""
		}
		ro.setAppCondition(syncv1.ConditionSynced, metav1.ConditionUnknown, syncv1.ReasonProgressing, message)
		ro.setReady()
		return
	}
	app.Phase = ro.Rev.Status.Phase
	if !ro.settled() || ro.Rev.Status.Phase != syncv1.PhaseHealthy || app.DeployedRevision != ro.Rev.Name {
		app.Sync = syncv1.SyncStateOutOfSync
	}

	if app.Sync == syncv1.SyncStateSynced {
		ro.setAppCondition(syncv1.ConditionSynced, metav1.ConditionTrue, syncv1.ReasonSucceeded,
			fmt.Sprintf("Revision %s is deployed and live state matches it", ro.Rev.Name))
	} else {
		reason, message := ro.syncBlocker()
		ro.setAppCondition(syncv1.ConditionSynced, metav1.ConditionFalse, reason, message)
	}

	awaiting := meta.FindStatusCondition(ro.Rev.Status.Conditions, syncv1.ConditionAwaitingApproval)
	if awaiting != nil && awaiting.Status == metav1.ConditionTrue {
		ro.setAppCondition(syncv1.ConditionAwaitingApproval, metav1.ConditionTrue, awaiting.Reason, awaiting.Message)
	} else if meta.FindStatusCondition(app.Conditions, syncv1.ConditionAwaitingApproval) != nil {
		ro.setAppCondition(syncv1.ConditionAwaitingApproval, metav1.ConditionFalse, syncv1.ReasonProgressing,
			fmt.Sprintf("Revision %s is not waiting for approval", ro.Rev.Name))
	}
	ro.setHealthy()
	ro.setReady()
}

// setHealthy reports the health state as a condition.
func (ro *rollout) setHealthy() {
	switch h := ro.App.Status.Health; h {
	case "":
	case syncv1.HealthHealthy:
		ro.setAppCondition(syncv1.ConditionHealthy, metav1.ConditionTrue, syncv1.ReasonSucceeded, "every applied object is Healthy")
	case syncv1.HealthDegraded, syncv1.HealthMissing:
		ro.setAppCondition(syncv1.ConditionHealthy, metav1.ConditionFalse, syncv1.ReasonHealthFailure, healthMessage(ro.Rev, h))
	default:
		ro.setAppCondition(syncv1.ConditionHealthy, metav1.ConditionUnknown, syncv1.ReasonProgressing, healthMessage(ro.Rev, h))
	}
}

// healthMessage is the Revision's own account of its health, if it has one.
func healthMessage(rev *syncv1.Revision, h syncv1.HealthState) string {
	if c := meta.FindStatusCondition(rev.Status.Conditions, syncv1.ConditionHealthy); c != nil && c.Status != metav1.ConditionTrue {
		return c.Message
	}
	return fmt.Sprintf("Revision %s is %s", rev.Name, h)
}

// syncBlocker says why the Application is not Synced: a refusal, a failed
// step of the desired Revision, a pending approval or a rollout in progress.
func (ro *rollout) syncBlocker() (reason, message string) {
	if ro.blocked != nil {
		return ro.blocked.Reason, ro.blocked.Message
	}
	if ro.drift != nil {
		return ro.drift.Reason, fmt.Sprintf("live state drifted from Revision %s and cannot be corrected: %s", ro.Rev.Name, ro.drift.Message)
	}
	conds := ro.Rev.Status.Conditions
	if c := meta.FindStatusCondition(conds, syncv1.ConditionPlanned); c != nil && c.Status == metav1.ConditionFalse {
		return c.Reason, c.Message
	}
	if ro.Rev.Status.Phase == syncv1.PhaseFailed {
		if c := meta.FindStatusCondition(conds, syncv1.ConditionRolloutComplete); c != nil {
			return c.Reason, c.Message
		}
	}
	if c := meta.FindStatusCondition(conds, syncv1.ConditionAwaitingApproval); c != nil && c.Status == metav1.ConditionTrue {
		return c.Reason, c.Message
	}
	if ro.settled() && ro.Rev.Status.Phase == syncv1.PhaseHealthy {
		return syncv1.ReasonProgressing, fmt.Sprintf("live state differs from Revision %s", ro.Rev.Name)
	}
	return syncv1.ReasonProgressing, fmt.Sprintf("rolling out Revision %s", ro.Rev.Name)
}

// setReady sums Synced and Healthy up.
func (ro *rollout) setReady() {
	app := &ro.App.Status
	synced := meta.FindStatusCondition(app.Conditions, syncv1.ConditionSynced)
	switch {
	case synced != nil && synced.Status != metav1.ConditionTrue:
		ro.setAppCondition(syncv1.ConditionReady, metav1.ConditionFalse, synced.Reason, synced.Message)
	case app.Health == syncv1.HealthHealthy:
		ro.setAppCondition(syncv1.ConditionReady, metav1.ConditionTrue, syncv1.ReasonSucceeded,
			fmt.Sprintf("Revision %s is deployed and Healthy", app.DeployedRevision))
	case app.Health == syncv1.HealthDegraded || app.Health == syncv1.HealthMissing:
		ro.setAppCondition(syncv1.ConditionReady, metav1.ConditionFalse, syncv1.ReasonHealthFailure,
			fmt.Sprintf("Revision %s is deployed but %s", app.DeployedRevision, app.Health))
	default:
		ro.setAppCondition(syncv1.ConditionReady, metav1.ConditionFalse, syncv1.ReasonProgressing,
			fmt.Sprintf("Revision %s is deployed and becoming Healthy", app.DeployedRevision))
	}
}

func (ro *rollout) setAppCondition(typ string, status metav1.ConditionStatus, reason, message string) bool {
	return setCondition(&ro.App.Status.Conditions, ro.App.Generation, typ, status, reason, message)
}

func (ro *rollout) setRevCondition(typ string, status metav1.ConditionStatus, reason, message string) bool {
	return setCondition(&ro.Rev.Status.Conditions, ro.Rev.Generation, typ, status, reason, message)
}

// setCondition sets one condition and reports whether its status or reason
// changed, which is when a lifecycle Event is due.
func setCondition(conds *[]metav1.Condition, generation int64, typ string, status metav1.ConditionStatus, reason, message string) bool {
	before := meta.FindStatusCondition(*conds, typ)
	transition := before == nil || before.Status != status || before.Reason != reason
	meta.SetStatusCondition(conds, metav1.Condition{
		Type:               typ,
		Status:             status,
		Reason:             reason,
		Message:            ssa.Truncate(message),
		ObservedGeneration: generation,
	})
	return transition
}
