package revision

import (
	"context"
	"fmt"
	"strings"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/message"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/planner"
)

// maxDriftRecord bounds status.drift and the history entry's drift, as
// the CRDs do.
const maxDriftRecord = 1024

// detectDrift plans the deployed Revision again against live state on every
// reconcile of a settled Application: those a change to a watched object
// brings, and, for kinds the controller may not watch, those of the
// --drift-resync-interval. Any object whose dry-run differs from live has
// drifted: the Application is OutOfSync and gets a fresh plan of the
// correction, which starts a new attempt of the same Revision: at once for an
// automatic Application, once approved for a manual one (an ApprovalStale
// Event says so). Hooks are not compared, so a hook that ran and was deleted
// is never drift.
func (r *Reconciler) detectDrift(ctx context.Context, ro *rollout) (step, error) {
	if ro.completed || !ro.settled() ||
		ro.Rev.Status.Phase != syncv1.PhaseHealthy || ro.App.Status.DeployedRevision != ro.Rev.Name {
		return proceed, nil
	}
	entries, err := r.planEntries(ctx, ro, false)
	if f, ok := planner.AsFailure(err); ok {
		// Drift that cannot be applied without force, or at all, is shown, not corrected.
		ro.App.Status.Sync = syncv1.SyncStateOutOfSync
		ro.drift = f
		return proceed, nil
	}
	if err != nil {
		return halt, err
	}
	var drifted []string
	for _, e := range entries {
		if e.Action != syncv1.ActionUnchanged {
			drifted = append(drifted, planner.IDOfRef(e.Ref).String())
		}
	}
	if len(drifted) == 0 {
		ro.App.Status.Sync = syncv1.SyncStateSynced
		return proceed, nil
	}
	ro.App.Status.Sync = syncv1.SyncStateOutOfSync
	names := drifted
	if len(names) > planner.MaxNamedObjects {
		names = append(names[:planner.MaxNamedObjects:planner.MaxNamedObjects], fmt.Sprintf("and %d more", len(drifted)-planner.MaxNamedObjects))
	}
	p, err := r.computePlan(ctx, ro)
	if f, ok := planner.AsFailure(err); ok {
		ro.drift = f
		return proceed, nil
	}
	if err != nil {
		return halt, err
	}
	used := ro.Rev.Status.Approval
	ro.Rev.Status.Plan = &p
	ro.Rev.Status.Phase = syncv1.PhasePlanned
	record := fmt.Sprintf("%d object(s) drifted: %s", len(drifted), strings.Join(names, ", "))
	if len(ro.handEdits) > 0 {
		record += "; edited by hand: " + strings.Join(ro.handEdits, "; ")
	}
	ro.Rev.Status.Drift = message.Bound(record, maxDriftRecord)
	if ro.approved() {
		ro.normal(syncv1.ReasonProgressing, actionSelfHeal, "live state of %d object(s) drifted from Revision %s: %s; rolling it out again",
			len(drifted), ro.Rev.Name, strings.Join(names, ", "))
		return waitFor(shortPoll), nil
	}
	// A manual Application's approval covered one rollout, which is over:
	// the correction is a new plan that waits for its own approval.
	approvedBy := "nobody"
	if used != nil {
		approvedBy = fmt.Sprintf("%s (plan %s)", used.By, used.Digest)
	}
	ro.warning(syncv1.ReasonApprovalStale, actionApprove,
		"live state of %d object(s) drifted from Revision %s: %s; the rollout approved by %s no longer describes the cluster: the correction is plan %s, approve it with `%s`",
		len(drifted), ro.Rev.Name, strings.Join(names, ", "), approvedBy, p.Digest, ro.App.ApproveCommand(ro.Rev.Name))
	return waitFor(shortPoll), nil
}
