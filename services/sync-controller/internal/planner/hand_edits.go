package planner

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/ignore"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/plan"
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
func (p *Planner) handEditManagers() []string {
	if p.HandEditManagers == nil {
		return DefaultHandEditManagers
	}
	return p.HandEditManagers
}

// reclaimHandEdits takes back the fields of live that people changed by
// hand, as Flux does before it applies: every managedFields entry of a
// hand-edit manager (other than on the status subresource) is merged into
// Kuvryn Sync's own Apply entry, so that the next apply sets those fields
// back and removes the ones the desired state does not declare. Fields of
// any other manager stay theirs and still conflict. Only objects Kuvryn Sync
// has applied are touched, and only entries of the same apiVersion as its
// own, whose field paths match. Only ownership moves, no value. An automatic
// Application does it while planning; a manual one changes nothing live
// before its plan is approved, so it plans the take-over (planTakeover) and
// does it when the approved rollout applies the object. It returns live as
// the API server answered the change. Fields under ignored are never taken:
// they stay with whoever set them. It does not record what it took (see
// Scope.HandEdits), so that objects planned at once can be recorded in order.
func (p *Planner) reclaimHandEdits(ctx context.Context, s *Scope, live *unstructured.Unstructured, ignored []ignore.Pointer) (*unstructured.Unstructured, []string, error) {
	if live == nil {
		return live, nil, nil
	}
	var taken []string
	// The object's own controllers write it too (a Deployment's records
	// its revision), so the locked patch can lose the race: read it again.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		out, took, err := p.takeBackHandEdits(ctx, s, live, ignored)
		if apierrors.IsConflict(err) {
			fresh := live.DeepCopy()
			if getErr := s.Client.Get(ctx, client.ObjectKeyFromObject(live), fresh); getErr != nil {
				return fmt.Errorf("reading %s again: %w", IDOf(live), getErr)
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
func (p *Planner) takeBackHandEdits(ctx context.Context, s *Scope, live *unstructured.Unstructured, ignored []ignore.Pointer) (*unstructured.Unstructured, []string, error) {
	t, err := p.handEditTakeover(live, ignored)
	if err != nil || len(t.taken) == 0 {
		return live, nil, err
	}
	patch := client.MergeFromWithOptions(live.DeepCopy(), client.MergeFromWithOptimisticLock{})
	out := live.DeepCopy()
	out.SetManagedFields(t.entries)
	if err := s.Client.Patch(ctx, out, patch); err != nil {
		return nil, nil, fmt.Errorf("taking back hand-edited fields of %s: %w", IDOf(live), err)
	}
	return out, t.taken, nil
}

// takeover is what reclaimHandEdits makes of an object's managed fields,
// computed without writing anything.
type takeover struct {
	// entries are the managed fields once taken back.
	entries []metav1.ManagedFieldsEntry
	// fields are the fields taken, and kept those every other entry of
	// entries still holds.
	fields, kept *fieldpath.Set
	// taken names the fields taken, one item per field manager.
	taken []string
}

// handEditTakeover computes reclaimHandEdits' change to live's managed
// fields; taken is empty when there is nothing to take.
func (p *Planner) handEditTakeover(live *unstructured.Unstructured, ignored []ignore.Pointer) (takeover, error) {
	entries := live.GetManagedFields()
	own := slices.IndexFunc(entries, isOwnApplyEntry)
	if own < 0 {
		return takeover{}, nil
	}
	owned, err := fieldSet(entries[own])
	if err != nil {
		return takeover{}, fmt.Errorf("reading the fields Kuvryn Sync owns of %s: %w", IDOf(live), err)
	}
	t := takeover{fields: &fieldpath.Set{}, kept: &fieldpath.Set{}}
	kept := make([]metav1.ManagedFieldsEntry, 0, len(entries))
	for i, e := range entries {
		if i == own {
			continue
		}
		if !p.takesFrom(entries[own], e) {
			kept = append(kept, e)
			continue
		}
		set, err := fieldSet(e)
		if err != nil {
			return takeover{}, fmt.Errorf("reading the fields field manager %q owns of %s: %w", e.Manager, IDOf(live), err)
		}
		set, left := splitIgnored(set, live, ignored)
		if !left.Empty() {
			raw, err := left.ToJSON()
			if err != nil {
				return takeover{}, fmt.Errorf("writing the fields field manager %q keeps of %s: %w", e.Manager, IDOf(live), err)
			}
			e.FieldsV1 = metav1.NewFieldsV1(string(raw))
			kept = append(kept, e)
		}
		if set.Empty() {
			continue
		}
		t.fields = t.fields.Union(set)
		t.taken = append(t.taken, fmt.Sprintf("%s from field manager %q", namePaths(set), e.Manager))
	}
	if len(t.taken) == 0 {
		return takeover{}, nil
	}
	for _, e := range kept {
		set, err := fieldSet(e)
		if err != nil {
			return takeover{}, fmt.Errorf("reading the fields field manager %q owns of %s: %w", e.Manager, IDOf(live), err)
		}
		t.kept = t.kept.Union(set)
	}
	raw, err := owned.Union(t.fields).ToJSON()
	if err != nil {
		return takeover{}, fmt.Errorf("writing the fields Kuvryn Sync owns of %s: %w", IDOf(live), err)
	}
	mine := entries[own]
	mine.FieldsV1 = metav1.NewFieldsV1(string(raw))
	t.entries = append(kept, mine)
	return t, nil
}

// isOwnApplyEntry reports whether e holds what Kuvryn Sync applied.
func isOwnApplyEntry(e metav1.ManagedFieldsEntry) bool {
	return e.Manager == syncv1.FieldManagerSync && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == ""
}

// takesFrom reports whether reclaimHandEdits takes the fields of entry e,
// given Kuvryn Sync's own Apply entry own: a hand-edit manager's, other
// than on the status subresource, of the same apiVersion.
func (p *Planner) takesFrom(own, e metav1.ManagedFieldsEntry) bool {
	return slices.Contains(p.handEditManagers(), e.Manager) && e.Subresource != "status" && e.APIVersion == own.APIVersion
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

// namePaths names up to MaxNamedObjects leaf fields of set and counts the rest.
func namePaths(set *fieldpath.Set) string {
	var paths []string
	total := 0
	set.Leaves().Iterate(func(p fieldpath.Path) {
		total++
		if len(paths) < MaxNamedObjects {
			paths = append(paths, p.String())
		}
	})
	s := strings.Join(paths, ", ")
	if more := total - len(paths); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}

// planTakeover plans obj, which exists, for a manual Application without
// writing anything: its hand-edited fields are planned as the approved
// rollout takes them back (TakeBackBeforeApply). Where the desired state
// sets a hand-edited field to another value, the unforced dry-run conflicts
// and a forced one shows the value the rollout sets, as long as it takes
// fields from hand-edit managers only; a conflict with any other manager
// stays the plan's ApplyConflict. Fields set by hand that the desired state
// does not declare stay in the dry-run, which cannot drop them: the entry is
// an update whose diff names them (handEditNote), since the rollout removes
// them. A take-over that changes no value is not drift.
func (p *Planner) planTakeover(ctx context.Context, s *Scope, obj, live *unstructured.Unstructured, ignored []ignore.Pointer, force bool) (objectPlan, error) {
	t, err := p.handEditTakeover(live, ignored)
	if err != nil {
		return objectPlan{}, err
	}
	dryRun, err := ApplyObject(ctx, s.Client, obj, true, force, syncv1.ReasonValidationFailure)
	forced := false
	if f, ok := AsFailure(err); ok && f.Reason == syncv1.ReasonApplyConflict && len(t.taken) > 0 {
		taking, forcedErr := ApplyObject(ctx, s.Client, obj, true, true, syncv1.ReasonValidationFailure)
		if forcedErr != nil {
			return objectPlan{}, forcedErr
		}
		if forced, err = p.takesHandEditsOnly(live, taking); err != nil {
			return objectPlan{}, err
		}
		if !forced {
			return objectPlan{}, f
		}
		dryRun = taking
	}
	if err != nil {
		return objectPlan{}, err
	}
	removed, err := removedByTakeover(t, dryRun)
	if err != nil {
		return objectPlan{}, err
	}
	entry, err := plan.NewEntry(live, dryRun)
	if err != nil {
		return objectPlan{}, err
	}
	entry.Force = force
	op := objectPlan{entry: entry}
	if len(t.taken) > 0 {
		op.handEdited = live
	}
	if forced || len(removed) > 0 {
		op.taken = t.taken
	}
	if len(removed) > 0 {
		op.entry.Action = syncv1.ActionUpdate
		op.entry.Diff = handEditNote(removed) + op.entry.Diff
	}
	if len(ignored) == 0 && len(t.taken) == 0 && equality.Semantic.DeepEqual(live.Object, dryRun.Object) {
		op.noop = live
	}
	return op, nil
}

// takesHandEditsOnly reports whether the forced dry-run taking took fields
// of live from hand-edit managers only: every other manager's entry in live
// holds no field that its entry in taking lacks.
func (p *Planner) takesHandEditsOnly(live, taking *unstructured.Unstructured) (bool, error) {
	entries := live.GetManagedFields()
	own := slices.IndexFunc(entries, isOwnApplyEntry)
	for i, e := range entries {
		if i == own || (own >= 0 && p.takesFrom(entries[own], e)) {
			continue
		}
		before, err := fieldSet(e)
		if err != nil {
			return false, fmt.Errorf("reading the fields field manager %q owns of %s: %w", e.Manager, IDOf(live), err)
		}
		after := &fieldpath.Set{}
		if j := slices.IndexFunc(taking.GetManagedFields(), func(d metav1.ManagedFieldsEntry) bool {
			return d.Manager == e.Manager && d.Operation == e.Operation && d.Subresource == e.Subresource && d.APIVersion == e.APIVersion
		}); j >= 0 {
			if after, err = fieldSet(taking.GetManagedFields()[j]); err != nil {
				return false, fmt.Errorf("reading the fields field manager %q would own of %s: %w", e.Manager, IDOf(live), err)
			}
		}
		if !before.Difference(after).Empty() {
			return false, nil
		}
	}
	return true, nil
}

// removedByTakeover names the fields the rollout removes once t is taken
// back: those taken that the desired state, as dry-run, does not declare
// (nor any field below them), and that no other manager keeps.
func removedByTakeover(t takeover, dryRun *unstructured.Unstructured) ([]string, error) {
	if t.fields == nil {
		return nil, nil
	}
	declared := &fieldpath.Set{}
	if i := slices.IndexFunc(dryRun.GetManagedFields(), isOwnApplyEntry); i >= 0 {
		var err error
		if declared, err = fieldSet(dryRun.GetManagedFields()[i]); err != nil {
			return nil, fmt.Errorf("reading the fields Kuvryn Sync would own of %s: %w", IDOf(dryRun), err)
		}
	}
	var below []string
	declared.Iterate(func(p fieldpath.Path) { below = append(below, p.String()) })
	var removed []string
	t.fields.Difference(declared).Difference(t.kept).Leaves().Iterate(func(p fieldpath.Path) {
		name := p.String()
		if !slices.ContainsFunc(below, func(d string) bool {
			return strings.HasPrefix(d, name+".") || strings.HasPrefix(d, name+"[")
		}) {
			removed = append(removed, name)
		}
	})
	return removed, nil
}

// handEditNote heads the diff of an object whose rollout removes the
// fields removed, set by hand: a dry-run cannot show their removal.
func handEditNote(removed []string) string {
	names := removed
	if len(names) > MaxNamedObjects {
		names = append(names[:MaxNamedObjects:MaxNamedObjects], fmt.Sprintf("and %d more", len(removed)-MaxNamedObjects))
	}
	return fmt.Sprintf("# set by hand, not in the desired state: removed when applied: %s\n", strings.Join(names, ", "))
}

// TakeBackBeforeApply takes back, for a manual Application's approved
// rollout, the hand-edited fields of obj that its plan showed taken, just
// before obj is applied. The live state this reconcile's plan read serves
// when it planned; a later reconcile reads it.
func (p *Planner) TakeBackBeforeApply(ctx context.Context, s *Scope, obj *unstructured.Unstructured, ignored []ignore.Pointer) ([]string, error) {
	if s.App.Spec.Sync.Automatic {
		return nil, nil
	}
	live, ok := s.HandEdited[IDOf(obj)]
	if !ok && s.Planned {
		return nil, nil
	}
	if !ok {
		var err error
		if live, err = GetLive(ctx, s.Client, obj); err != nil {
			return nil, err
		}
	}
	_, taken, err := p.reclaimHandEdits(ctx, s, live, ignored)
	return taken, err
}
