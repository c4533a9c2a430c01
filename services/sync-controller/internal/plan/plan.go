// Package plan turns live objects and their Server-Side Apply dry-runs into
// a Revision's plan: one Entry per object, a digest that approval binds to,
// and the bounded, redacted syncv1.Plan written into status.
//
// The controller, for each desired object, reads the live object and the
// dry-run result and calls NewEntry(live, dryRun); for each inventory object
// no longer desired it calls NewEntry(live, nil), a delete. It then sets
// Wave and Hook from the wave package and calls Build. Nothing here talks to
// a cluster.
package plan

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// Entry is one object's plan, before bounding for status.
type Entry struct {
	Ref    syncv1.ObjectRef
	Action syncv1.PlanAction
	// LiveHash is Hash of the live object; "" when there is none (create).
	LiveHash string
	// DesiredHash is Hash of the dry-run result; "" for a delete.
	DesiredHash string
	// Wave and Hook are where the rollout applies the object. Hook is
	// string(stage) for a pre-sync or post-sync hook, "" otherwise.
	Wave int32
	Hook string
	// Force is true when the object is applied with force. Like Wave and
	// Hook it comes from an annotation, which DesiredHash already covers.
	Force bool
	// Diff is the redacted diff from Diff; empty when unchanged. It is not
	// part of the digest, which already covers both hashes.
	Diff          string
	DiffTruncated bool
}

// RefOf identifies obj.
func RefOf(obj *unstructured.Unstructured) syncv1.ObjectRef {
	gvk := obj.GroupVersionKind()
	return syncv1.ObjectRef{
		Group:     gvk.Group,
		Version:   gvk.Version,
		Kind:      gvk.Kind,
		Namespace: obj.GetNamespace(),
		Name:      obj.GetName(),
	}
}

// Action is what apply does to an object: create when there is no live
// object, delete when there is no dry-run (an inventory object no longer
// desired), unchanged when both normalise to the same object, else update.
// With neither object there is nothing to do: unchanged.
func Action(live, dryRun *unstructured.Unstructured) syncv1.PlanAction {
	switch {
	case live == nil && dryRun == nil:
		return syncv1.ActionUnchanged
	case live == nil:
		return syncv1.ActionCreate
	case dryRun == nil:
		return syncv1.ActionDelete
	case reflect.DeepEqual(Normalize(live).Object, Normalize(dryRun).Object):
		return syncv1.ActionUnchanged
	default:
		return syncv1.ActionUpdate
	}
}

// NewEntry plans one object from its live state and the dry-run of its
// desired state; either may be nil, not both. Ref is taken from the dry-run
// when there is one. Wave and Hook are left for the caller. It fails only
// where Hash or Diff do.
func NewEntry(live, dryRun *unstructured.Unstructured) (Entry, error) {
	if live == nil && dryRun == nil {
		return Entry{}, errors.New("plan entry needs a live or a dry-run object")
	}
	entry := Entry{Ref: RefOf(firstNonNil(dryRun, live)), Action: Action(live, dryRun)}
	var err error
	if entry.LiveHash, err = Hash(live); err != nil {
		return Entry{}, err
	}
	if entry.DesiredHash, err = Hash(dryRun); err != nil {
		return Entry{}, err
	}
	if entry.Action != syncv1.ActionUnchanged {
		if entry.Diff, entry.DiffTruncated, err = Diff(live, dryRun); err != nil {
			return Entry{}, err
		}
	}
	return entry, nil
}

// digestFormat heads the digest input, so a change of encoding is a change
// of digest rather than a silent collision.
const digestFormat = "kuvryn-plan-digest/v1\n"

// Digest is "sha256:<hex>" over every entry's identity, action, LiveHash
// and DesiredHash, and nothing else. Entries are sorted first (group,
// version, kind, namespace, name, then the rest) and each is encoded as one
// line of those eight strings, Go-quoted and space-separated, so the same
// entries give the same digest, byte for byte, in any order.
func Digest(entries []Entry) string {
	sorted := slices.Clone(entries)
	slices.SortFunc(sorted, compareForDigest)
	var canonical strings.Builder
	canonical.WriteString(digestFormat)
	for _, e := range sorted {
		for i, field := range []string{
			e.Ref.Group, e.Ref.Version, e.Ref.Kind, e.Ref.Namespace, e.Ref.Name,
			string(e.Action), e.LiveHash, e.DesiredHash,
		} {
			if i > 0 {
				canonical.WriteByte(' ')
			}
			canonical.WriteString(strconv.Quote(field))
		}
		canonical.WriteByte('\n')
	}
	sum := sha256.Sum256([]byte(canonical.String()))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Build bounds entries into the status Plan. Summary counts every entry
// and Digest covers every entry; Entries keeps at most
// syncv1.MaxPlanEntries, changes before unchanged objects, each part in
// identity order, and Truncated says whether any were left out. Diffs
// longer than syncv1.MaxDiffBytes are cut on a line boundary. PlannedAt is
// left for the caller, so Build stays a pure function.
func Build(entries []Entry) syncv1.Plan {
	plan := syncv1.Plan{Digest: Digest(entries)}
	for _, e := range entries {
		switch e.Action {
		case syncv1.ActionCreate:
			plan.Summary.Create++
		case syncv1.ActionUpdate:
			plan.Summary.Update++
		case syncv1.ActionDelete:
			plan.Summary.Delete++
		case syncv1.ActionUnchanged:
			plan.Summary.Unchanged++
		}
	}

	sorted := slices.Clone(entries)
	slices.SortFunc(sorted, func(a, b Entry) int {
		unchangedA, unchangedB := a.Action == syncv1.ActionUnchanged, b.Action == syncv1.ActionUnchanged
		if unchangedA != unchangedB {
			if unchangedB {
				return -1
			}
			return 1
		}
		return compareForDigest(a, b)
	})
	if len(sorted) > syncv1.MaxPlanEntries {
		sorted, plan.Truncated = sorted[:syncv1.MaxPlanEntries], true
	}
	for _, e := range sorted {
		diff, cut := truncateLines(e.Diff, syncv1.MaxDiffBytes)
		plan.Entries = append(plan.Entries, syncv1.PlanEntry{
			ObjectRef:     e.Ref,
			Action:        e.Action,
			Wave:          e.Wave,
			Hook:          e.Hook,
			Force:         e.Force,
			Diff:          diff,
			DiffTruncated: e.DiffTruncated || cut,
		})
	}
	return plan
}

// compareForDigest is a total order on everything the digest encodes.
func compareForDigest(a, b Entry) int {
	return cmp.Or(
		cmp.Compare(a.Ref.Group, b.Ref.Group),
		cmp.Compare(a.Ref.Version, b.Ref.Version),
		cmp.Compare(a.Ref.Kind, b.Ref.Kind),
		cmp.Compare(a.Ref.Namespace, b.Ref.Namespace),
		cmp.Compare(a.Ref.Name, b.Ref.Name),
		cmp.Compare(a.Action, b.Action),
		cmp.Compare(a.LiveHash, b.LiveHash),
		cmp.Compare(a.DesiredHash, b.DesiredHash),
	)
}

func firstNonNil(objs ...*unstructured.Unstructured) *unstructured.Unstructured {
	for _, obj := range objs {
		if obj != nil {
			return obj
		}
	}
	return nil
}
