package revision

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/ignore"
)

// DefaultHandEditManagers are the field managers kubectl writes under when a
// person edits, patches, labels, annotates, scales, sets, replaces or
// client-side applies an object, or server-side applies it without naming a
// manager, and before-first-apply, which holds what a client-side apply
// wrote before the object was first server-side applied.
var DefaultHandEditManagers = []string{
	"kubectl", "kubectl-edit", "kubectl-patch", "kubectl-label", "kubectl-annotate",
	"kubectl-scale", "kubectl-set", "kubectl-replace", "kubectl-rollout",
	"kubectl-client-side-apply", "before-first-apply",
}

// handEditManagers is the list in force.
func (r *Reconciler) handEditManagers() []string {
	if r.Options.HandEditManagers == nil {
		return DefaultHandEditManagers
	}
	return r.Options.HandEditManagers
}

// reclaimHandEdits takes back the fields of live that people changed by
// hand, as Flux does before it applies: every managedFields entry of a
// hand-edit manager (other than on the status subresource) is merged into
// Kuvryn Sync's own Apply entry, so that the next apply sets those fields
// back and removes the ones the desired state does not declare. Fields of
// any other manager stay theirs and still conflict. Only objects Kuvryn Sync
// has applied are touched, and only entries of the same apiVersion as its
// own, whose field paths match. Only ownership moves, no value: a manual
// Application does it too, so that its plan shows the correction, which
// nothing applies until that plan is approved. It returns live as the API
// server answered the change. Fields under ignored are never taken: they
// stay with whoever set them. It does not record what it took (see
// recordHandEdits), so that objects planned at once can be recorded in order.
func (r *Reconciler) reclaimHandEdits(ctx context.Context, ro *rollout, live *unstructured.Unstructured, ignored []ignore.Pointer) (*unstructured.Unstructured, []string, error) {
	if live == nil {
		return live, nil, nil
	}
	var taken []string
	// The object's own controllers write it too (a Deployment's records
	// its revision), so the locked patch can lose the race: read it again.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		out, took, err := r.takeBackHandEdits(ctx, ro, live, ignored)
		if apierrors.IsConflict(err) {
			fresh := live.DeepCopy()
			if getErr := ro.client.Get(ctx, client.ObjectKeyFromObject(live), fresh); getErr != nil {
				return fmt.Errorf("reading %s again: %w", idOf(live), getErr)
			}
			live = fresh
			return err
		}
		if err == nil {
			live, taken = out, took
		}
		return err
	})
	return live, taken, err
}

// takeBackHandEdits is one locked attempt of reclaimHandEdits.
func (r *Reconciler) takeBackHandEdits(ctx context.Context, ro *rollout, live *unstructured.Unstructured, ignored []ignore.Pointer) (*unstructured.Unstructured, []string, error) {
	entries := live.GetManagedFields()
	own := slices.IndexFunc(entries, func(e metav1.ManagedFieldsEntry) bool {
		return e.Manager == syncv1.FieldManagerSync && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == ""
	})
	if own < 0 {
		return live, nil, nil
	}
	owned, err := fieldSet(entries[own])
	if err != nil {
		return nil, nil, fmt.Errorf("reading the fields Kuvryn Sync owns of %s: %w", idOf(live), err)
	}
	managers := r.handEditManagers()
	kept := make([]metav1.ManagedFieldsEntry, 0, len(entries))
	var taken []string
	for i, e := range entries {
		if i == own || !slices.Contains(managers, e.Manager) || e.Subresource == "status" || e.APIVersion != entries[own].APIVersion {
			kept = append(kept, e)
			continue
		}
		set, err := fieldSet(e)
		if err != nil {
			return nil, nil, fmt.Errorf("reading the fields field manager %q owns of %s: %w", e.Manager, idOf(live), err)
		}
		set, left := splitIgnored(set, live, ignored)
		if !left.Empty() {
			raw, err := left.ToJSON()
			if err != nil {
				return nil, nil, fmt.Errorf("writing the fields field manager %q keeps of %s: %w", e.Manager, idOf(live), err)
			}
			e.FieldsV1 = metav1.NewFieldsV1(string(raw))
			kept = append(kept, e)
		}
		if set.Empty() {
			continue
		}
		owned = owned.Union(set)
		taken = append(taken, fmt.Sprintf("%s from field manager %q", namePaths(set), e.Manager))
	}
	if len(taken) == 0 {
		return live, nil, nil
	}
	raw, err := owned.ToJSON()
	if err != nil {
		return nil, nil, fmt.Errorf("writing the fields Kuvryn Sync owns of %s: %w", idOf(live), err)
	}
	mine := entries[own]
	mine.FieldsV1 = metav1.NewFieldsV1(string(raw))
	kept = append(kept, mine)

	patch := client.MergeFromWithOptions(live.DeepCopy(), client.MergeFromWithOptimisticLock{})
	out := live.DeepCopy()
	out.SetManagedFields(kept)
	if err := ro.client.Patch(ctx, out, patch); err != nil {
		return nil, nil, fmt.Errorf("taking back hand-edited fields of %s: %w", idOf(live), err)
	}
	return out, taken, nil
}

// recordHandEdits records that the hand-edited fields taken of the object
// id were taken back, for the drift record and in an Event.
func (ro *rollout) recordHandEdits(id objectID, taken []string) {
	if len(taken) == 0 {
		return
	}
	ro.handEdits = append(ro.handEdits, fmt.Sprintf("%s: %s", id, strings.Join(taken, ", ")))
	if !ro.app.Spec.Sync.Automatic {
		ro.normal(syncv1.ReasonProgressing, actionSelfHeal, "%s was edited by hand: took back %s; the plan shows the correction, which waits for approval",
			id, strings.Join(taken, ", "))
		return
	}
	ro.normal(syncv1.ReasonDriftCorrected, actionSelfHeal, "%s was edited by hand: took back %s; the next apply rolls the edit back",
		id, strings.Join(taken, ", "))
}

// splitIgnored splits set into the fields to take and those under ignored,
// which their manager keeps.
func splitIgnored(set *fieldpath.Set, live *unstructured.Unstructured, ignored []ignore.Pointer) (take, keep *fieldpath.Set) {
	if len(ignored) == 0 {
		return set, &fieldpath.Set{}
	}
	var taken, kept []fieldpath.Path
	set.Iterate(func(p fieldpath.Path) {
		if ignore.Covers(p, live, ignored) {
			kept = append(kept, p.Copy())
		} else {
			taken = append(taken, p.Copy())
		}
	})
	return fieldpath.NewSet(taken...), fieldpath.NewSet(kept...)
}

func fieldSet(e metav1.ManagedFieldsEntry) (*fieldpath.Set, error) {
	set := &fieldpath.Set{}
	if e.FieldsV1 == nil {
		return set, nil
	}
	if err := set.FromJSON(e.FieldsV1.GetRawReader()); err != nil {
		return nil, err
	}
	return set, nil
}

// namePaths names up to maxNamedObjects leaf fields of set and counts the rest.
func namePaths(set *fieldpath.Set) string {
	var paths []string
	total := 0
	set.Leaves().Iterate(func(p fieldpath.Path) {
		total++
		if len(paths) < maxNamedObjects {
			paths = append(paths, p.String())
		}
	})
	s := strings.Join(paths, ", ")
	if more := total - len(paths); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}
