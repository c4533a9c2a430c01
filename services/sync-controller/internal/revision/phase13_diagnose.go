package revision

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/diagnosis"
)

// actionDiagnose is what the controller was doing when it emitted a
// Diagnosed Event.
const actionDiagnose = "Diagnose"

// diagnose explains an unhealthy Revision as causal chains in
// status.diagnosis, read as the Application's service account: once health
// assessment fails its rollout (HealthFailure, HookFailed), and again on
// each re-check while it stays Degraded or Missing. It clears them once the
// Revision is Healthy. The Diagnosed Event names the first root cause, and
// only when the set of causes changed, so re-checks of the same state stay
// quiet.
func (r *Reconciler) diagnose(ctx context.Context, ro *rollout) (step, error) {
	if ro.Rev == nil || (!ro.settled() && !ro.rolling()) {
		return proceed, nil
	}
	st := &ro.Rev.Status
	if st.Health == syncv1.HealthHealthy {
		st.Diagnosis = nil
		return proceed, nil
	}
	if !unhealthy(ro.Rev) {
		return proceed, nil
	}
	d, err := diagnosis.Run(ctx, ro.Client, ro.App.DestinationNamespace(), ro.Rev)
	if err != nil {
		return halt, err
	}
	before := st.Diagnosis
	st.Diagnosis = d
	if d != nil && diagnosis.Changed(before, d) {
		ro.warning(syncv1.ReasonDiagnosed, actionDiagnose, "%s", diagnosis.EventMessage(ro.Rev.Name, d))
	}
	return proceed, nil
}

// unhealthy says whether rev is worth diagnosing: its objects are Degraded
// or Missing, or its attempt failed on their health or on a hook.
func unhealthy(rev *syncv1.Revision) bool {
	switch rev.Status.Health {
	case syncv1.HealthDegraded, syncv1.HealthMissing:
		return true
	}
	c := meta.FindStatusCondition(rev.Status.Conditions, syncv1.ConditionRolloutComplete)
	return rev.Status.Phase == syncv1.PhaseFailed && c != nil &&
		(c.Reason == syncv1.ReasonHealthFailure || c.Reason == syncv1.ReasonHookFailed)
}
