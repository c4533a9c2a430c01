package revision

import (
	"context"
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// collectGarbage deletes the Application's oldest Revisions beyond
// spec.history.limit, and with them, through their owner references, their
// desired-state Secrets. The desired, deployed, last-known-good and held
// Revisions, and one still rolling out, are always kept.
func (r *Reconciler) collectGarbage(ctx context.Context, ro *rollout) (step, error) {
	revs, err := r.revisionsOf(ctx, ro.App)
	if err != nil {
		return halt, err
	}
	keep := map[string]bool{
		ro.App.Status.DesiredRevision:       true,
		ro.App.Status.DeployedRevision:      true,
		ro.App.Status.LastKnownGoodRevision: true,
		ro.App.Status.HeldRevision:          true,
	}
	sort.Slice(revs, func(i, j int) bool {
		ti, tj := revs[i].CreationTimestamp, revs[j].CreationTimestamp
		if !ti.Equal(&tj) {
			return tj.Before(&ti)
		}
		return revs[i].Name > revs[j].Name
	})
	for i := range revs {
		rev := &revs[i]
		if i < ro.historyLimit() || keep[rev.Name] || rev.Status.Phase == syncv1.PhaseApplying || !rev.DeletionTimestamp.IsZero() {
			continue
		}
		err := r.Client.Delete(ctx, rev, client.Preconditions{UID: &rev.UID})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return halt, fmt.Errorf("deleting Revision %s/%s beyond the history limit: %w", rev.Namespace, rev.Name, err)
		}
		if err == nil || apierrors.IsNotFound(err) {
			r.forgetVersion(rev)
		}
		if err == nil {
			r.log(ctx).Info("deleted Revision beyond the history limit", "revision", rev.Name, "limit", ro.historyLimit())
		}
	}
	return proceed, nil
}
