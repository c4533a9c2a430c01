package revision

import (
	"k8s.io/apimachinery/pkg/api/meta"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// The Revision's status is the rollout's only write-ahead record
// (DESIGN.md section 4): a checkpoint writes it alone, and the Application's
// status follows at the end of the pass. A controller stopped in between
// leaves an Application that does not show the attempt yet, so the first
// pass of the next one brings the Application up to the Revision's record
// before any phase reads it. Without that the attempt would look unstarted
// and run its hooks again.

// recordsAttempt reports whether app's status was written after rev's
// latest attempt began: its history holds the attempt, or one that began
// later. Start times are kept to the second, so one that began in the same
// second does not count. A Revision recorded before attempts carried a
// start time is taken as shown.
func recordsAttempt(app *syncv1.Application, rev *syncv1.Revision) bool {
	st := &rev.Status
	if st.Attempt == 0 || st.StartedAt == nil {
		return true
	}
	h := app.Status.History
	for _, e := range h {
		if e.Revision == rev.Name && e.Attempt == st.Attempt {
			return true
		}
	}
	return len(h) > 0 && h[0].StartedAt != nil && st.StartedAt.Before(h[0].StartedAt)
}

// heldByRollback is the Revision that rev's rollback attempt holds, as the
// attempt recorded it.
func heldByRollback(rev *syncv1.Revision) string {
	if a := rev.Status.Approval; a != nil && a.Rollback {
		return a.Holds
	}
	return ""
}

// catchUp adds the attempt the Revision records and the Application does
// not show to the Application's history, with its outcome if it has one.
func (ro *rollout) catchUp() {
	st := &ro.Rev.Status
	switch st.Phase {
	case syncv1.PhaseApplying, syncv1.PhaseHealthy, syncv1.PhaseFailed:
	default:
		return
	}
	if recordsAttempt(ro.App, ro.Rev) {
		return
	}
	ro.addHistory(st.StartedAt.DeepCopy())
	switch st.Phase {
	case syncv1.PhaseApplying:
		ro.App.Status.Health = syncv1.HealthProgressing
	case syncv1.PhaseHealthy:
		ro.finishHistory(syncv1.PhaseHealthy, syncv1.ReasonSucceeded)
		ro.deployed()
	case syncv1.PhaseFailed:
		reason := syncv1.ReasonHealthFailure
		if c := meta.FindStatusCondition(st.Conditions, syncv1.ConditionRolloutComplete); c != nil {
			reason = c.Reason
		}
		ro.finishHistory(syncv1.PhaseFailed, reason)
	}
}
