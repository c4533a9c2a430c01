package revision

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// startHistory records a new attempt at the desired Revision as the newest
// history entry, keeping at most spec.history.limit entries.
func (ro *rollout) startHistory() {
	ro.addHistory(ro.Now.DeepCopy())
}

// addHistory records the Revision's attempt that started at startedAt as
// the newest history entry.
func (ro *rollout) addHistory(startedAt *metav1.Time) {
	entry := syncv1.HistoryEntry{
		Revision:  ro.Rev.Name,
		Attempt:   ro.Rev.Status.Attempt,
		Result:    syncv1.PhaseApplying,
		StartedAt: startedAt,
		Approval:  ro.Rev.Status.Approval.DeepCopy(),
		Rollback:  ro.Rev.Status.Approval != nil && ro.Rev.Status.Approval.Rollback,
		Drift:     ro.Rev.Status.Drift,
	}
	// The desired Revision was rendered this time from the Application's
	// commit (a revert renders an earlier Revision again); its spec keeps
	// the first commit that rendered it.
	switch {
	case ro.Rev.Name == ro.App.Status.DesiredRevision && ro.App.Status.SourceCommit != "":
		entry.SourceCommit = ro.App.Status.SourceCommit
	case ro.Rev.Spec.Source != nil:
		entry.SourceCommit = ro.Rev.Spec.Source.Commit
	}
	if ro.Rev.Status.Plan != nil {
		entry.PlanDigest = ro.Rev.Status.Plan.Digest
	}
	// The record moves to the attempt that corrects the drift.
	ro.Rev.Status.Drift = ""
	history := append([]syncv1.HistoryEntry{entry}, ro.App.Status.History...)
	if limit := ro.historyLimit(); len(history) > limit {
		history = history[:limit]
	}
	ro.App.Status.History = history
}

// finishHistory closes the attempt under way with its result.
func (ro *rollout) finishHistory(result syncv1.RevisionPhase, reason string) {
	h := ro.App.Status.History
	if len(h) == 0 || h[0].Revision != ro.Rev.Name || h[0].Result != syncv1.PhaseApplying {
		return
	}
	h[0].Result = result
	h[0].Reason = reason
	h[0].FinishedAt = ro.Now.DeepCopy()
}

// revisionsOf lists the Application's Revisions from the cache.
func (r *Reconciler) revisionsOf(ctx context.Context, app *syncv1.Application) ([]syncv1.Revision, error) {
	var list syncv1.RevisionList
	if err := r.Client.List(ctx, &list, client.InNamespace(app.Namespace),
		client.MatchingFields{syncv1.RevisionApplicationField: app.Name}); err != nil {
		return nil, fmt.Errorf("listing Revisions of Application %s/%s: %w", app.Namespace, app.Name, err)
	}
	return list.Items, nil
}
