package application

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// revisionLabels are the labels of a new Revision of app: its Application,
// and its shard, so that the Revision is in the caches of the shard that
// rolls it out.
func revisionLabels(app *syncv1.Application) map[string]string {
	labels := map[string]string{syncv1.ApplicationLabel: app.Name}
	if shard, ok := app.Labels[syncv1.ShardLabel]; ok {
		labels[syncv1.ShardLabel] = shard
	}
	return labels
}

// followShard moves an Application's Revisions into its shard after the
// Application was moved (relabelled) into this one: until then this
// shard's controllers cannot see them, and the sync-controller resumes the
// rollout from their status once they can. It costs a read of the API
// server only when the desired Revision is missing from this shard's cache,
// and relabels the desired Revision last, so that a pass that finds it
// cached knows every other one was moved before it.
func (r *Reconciler) followShard(ctx context.Context, app *syncv1.Application) error {
	desired := app.Status.DesiredRevision
	if desired == "" {
		return nil
	}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: app.Namespace, Name: desired}, &syncv1.Revision{})
	if !apierrors.IsNotFound(err) {
		return err
	}
	var list syncv1.RevisionList
	if err := r.APIReader.List(ctx, &list, client.InNamespace(app.Namespace),
		client.MatchingLabelsSelector{Selector: syncv1.DesiredRevisionSelector(app.Name)}); err != nil {
		return fmt.Errorf("listing the Revisions of Application %s/%s to move them into its shard: %w", app.Namespace, app.Name, err)
	}
	shard, sharded := app.Labels[syncv1.ShardLabel]
	var last *syncv1.Revision
	for i := range list.Items {
		rev := &list.Items[i]
		if !rev.BelongsTo(client.ObjectKeyFromObject(app)) {
			continue
		}
		if rev.Name == desired {
			last = rev
			continue
		}
		if err := r.moveToShard(ctx, rev, shard, sharded); err != nil {
			return err
		}
	}
	if last == nil {
		return nil
	}
	return r.moveToShard(ctx, last, shard, sharded)
}

// moveToShard relabels one Revision into shard ("" and !sharded: the
// default shard, without the label).
func (r *Reconciler) moveToShard(ctx context.Context, rev *syncv1.Revision, shard string, sharded bool) error {
	current, has := rev.Labels[syncv1.ShardLabel]
	if has == sharded && current == shard {
		return nil
	}
	patch := client.MergeFrom(rev.DeepCopy())
	if rev.Labels == nil {
		rev.Labels = map[string]string{}
	}
	if sharded {
		rev.Labels[syncv1.ShardLabel] = shard
	} else {
		delete(rev.Labels, syncv1.ShardLabel)
	}
	if err := r.Client.Patch(ctx, rev, patch, client.FieldOwner(syncv1.FieldManagerSource)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("moving Revision %s/%s into shard %q: %w", rev.Namespace, rev.Name, shard, err)
	}
	return nil
}
