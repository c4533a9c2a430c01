package revision

import (
	"context"
	"fmt"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/planner"
)

// ensureWatches asks, with a SelfSubjectAccessReview per verb, whether the
// controller may list and watch each due kind across namespaces, and
// watches the metadata of those it may.
func (r *Reconciler) ensureWatches(ctx context.Context, ro *rollout) (step, error) {
	w := r.watches
	if w == nil || ro.Rev == nil || ro.Rev.Status.Inventory == nil {
		return proceed, nil
	}
	hooks := map[planner.ObjectID]bool{}
	if ro.Rev.Status.Hooks != nil {
		for _, h := range ro.Rev.Status.Hooks.Items {
			hooks[planner.IDOfRef(h.ObjectRef)] = true
		}
	}
	var ids []planner.ObjectID
	kinds := map[schema.GroupVersionKind]bool{}
	var gvks []schema.GroupVersionKind
	for _, e := range ro.Rev.Status.Inventory.Entries {
		obj, err := planner.ParseInventoryEntry(e)
		if err != nil || hooks[planner.IDOf(obj)] {
			// Hooks run once per attempt; their changes are never drift.
			continue
		}
		ids = append(ids, planner.IDOf(obj))
		if gvk := obj.GroupVersionKind(); !kinds[gvk] {
			kinds[gvk] = true
			gvks = append(gvks, gvk)
		}
	}
	w.Track(ro.key(), ids)

	for _, gvk := range w.Due(gvks, time.Now()) {
		allowed, err := r.mayListAndWatch(ctx, gvk)
		if err != nil {
			w.Forget(gvk)
			return halt, err
		}
		if !allowed {
			r.log(ctx).Info("not watching kind for drift: the controller may not list and watch it; it is re-checked every --drift-resync-interval",
				"kind", gvk.GroupKind().String())
			continue
		}
		if err := w.Watch(gvk); err != nil {
			return halt, err
		}
	}
	return proceed, nil
}

// mayListAndWatch asks the API server whether the controller may list and
// watch gvk in every namespace.
func (r *Reconciler) mayListAndWatch(ctx context.Context, gvk schema.GroupVersionKind) (bool, error) {
	mapping, err := r.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		// A kind no longer served cannot drift.
		return false, nil
	}
	for _, verb := range []string{"list", "watch"} {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Verb: verb, Group: gvk.Group, Version: gvk.Version, Resource: mapping.Resource.Resource,
			},
		}}
		if err := r.Client.Create(ctx, review); err != nil {
			return false, fmt.Errorf("asking whether the controller may %s %s: %w", verb, mapping.Resource.GroupResource(), err)
		}
		if !review.Status.Allowed {
			return false, nil
		}
	}
	return true, nil
}
