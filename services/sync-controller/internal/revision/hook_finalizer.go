package revision

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/planner"
)

// withHookFinalizer returns a copy of a hook object that carries syncv1.HookFinalizer.
func withHookFinalizer(obj *unstructured.Unstructured) *unstructured.Unstructured {
	out := obj.DeepCopy()
	controllerutil.AddFinalizer(out, syncv1.HookFinalizer)
	return out
}

// releaseHook removes syncv1.HookFinalizer from a live hook object, so a deletion
// under way can finish.
func releaseHook(ctx context.Context, c client.Client, live *unstructured.Unstructured) error {
	if !controllerutil.ContainsFinalizer(live, syncv1.HookFinalizer) {
		return nil
	}
	patch := client.MergeFromWithOptions(live.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(live, syncv1.HookFinalizer)
	if err := c.Patch(ctx, live, patch); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("removing finalizer %s from %s: %w", syncv1.HookFinalizer, planner.IDOf(live), err)
	}
	return nil
}

// deleteObject deletes live, in the background, unless it was replaced by
// another object of the same name, and releases it if it is a hook.
func deleteObject(ctx context.Context, c client.Client, live *unstructured.Unstructured) error {
	err := c.Delete(ctx, live, client.PropagationPolicy(metav1.DeletePropagationBackground),
		client.Preconditions{UID: ptr.To(live.GetUID())})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	if err != nil || !controllerutil.ContainsFinalizer(live, syncv1.HookFinalizer) {
		return err
	}
	fresh, err := planner.GetLive(ctx, c, live)
	if err != nil || fresh == nil || fresh.GetUID() != live.GetUID() {
		return err
	}
	return releaseHook(ctx, c, fresh)
}

// releaseFinishedHooks lets go of every hook object of a settled attempt:
// a failed attempt can leave hooks that were still running, and nothing
// reads them any more.
func (r *Reconciler) releaseFinishedHooks(ctx context.Context, ro *rollout) error {
	if ro.Rev.Status.Hooks == nil {
		return nil
	}
	for _, h := range ro.Rev.Status.Hooks.Items {
		if h.UID == "" {
			continue
		}
		obj := &unstructured.Unstructured{}
		obj.SetAPIVersion(h.Group + "/" + h.Version)
		if h.Group == "" {
			obj.SetAPIVersion(h.Version)
		}
		obj.SetKind(h.Kind)
		obj.SetNamespace(h.Namespace)
		obj.SetName(h.Name)
		live, err := planner.GetLive(ctx, ro.Client, obj)
		if err != nil {
			return err
		}
		if live != nil && string(live.GetUID()) == h.UID {
			if err := releaseHook(ctx, ro.Client, live); err != nil {
				return err
			}
		}
	}
	return nil
}
