package revision

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/desired"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/wave"
)

// pruneCandidates are the live objects Kuvryn Sync applied in earlier
// attempts that left the desired state, in reverse apply order. Earlier
// attempts are the deployed Revision and every attempt since, failed or
// superseded ones included, so that what they created is not left behind.
// Objects someone else has taken over entirely, or another Application
// now owns, are left alone.
func (r *Reconciler) pruneCandidates(ctx context.Context, ro *rollout, ds *desired.State) ([]*unstructured.Unstructured, error) {
	entries, err := r.priorInventory(ctx, ro)
	if err != nil {
		return nil, err
	}
	var stale []*unstructured.Unstructured
	for _, entry := range entries {
		obj, err := parseInventoryEntry(entry)
		if err != nil {
			r.log(ctx).Info("ignoring unreadable inventory entry", "error", err.Error())
			continue
		}
		if ds.IDs[idOf(obj)] {
			continue
		}
		live, err := getLive(ctx, ro.client, obj)
		if errors.Is(err, errKindNotServed) {
			// Its kind is gone, and every object of it with it.
			continue
		}
		if err != nil {
			return nil, err
		}
		if live == nil || !managedBySync(live) || ro.ownedByAnother(live) != "" {
			continue
		}
		stale = append(stale, live)
	}
	sort.SliceStable(stale, func(i, j int) bool {
		oi, oj := wave.KindOrder(stale[i].GroupVersionKind()), wave.KindOrder(stale[j].GroupVersionKind())
		if oi != oj {
			return oi > oj
		}
		return idOf(stale[i]).String() < idOf(stale[j]).String()
	})
	return stale, nil
}

// priorInventory is the union of the inventories of the deployed Revision
// and of every attempt recorded after it.
func (r *Reconciler) priorInventory(ctx context.Context, ro *rollout) ([]string, error) {
	var names []string
	for _, h := range ro.app.Status.History {
		names = append(names, h.Revision)
		if h.Result == syncv1.PhaseHealthy {
			break
		}
	}
	names = append(names, ro.app.Status.DeployedRevision)

	seen := map[string]bool{"": true, ro.rev.Name: true}
	have := map[string]bool{}
	var entries []string
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		rev := &syncv1.Revision{}
		if err := r.Client.Get(ctx, types.NamespacedName{Namespace: ro.app.Namespace, Name: name}, rev); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("reading inventory of Revision %s/%s: %w", ro.app.Namespace, name, err)
		}
		if rev.Status.Inventory == nil {
			continue
		}
		for _, e := range rev.Status.Inventory.Entries {
			if !have[e] {
				have[e] = true
				entries = append(entries, e)
			}
		}
	}
	return entries, nil
}

// maxNamedObjects is how many objects a prune message or Event names.
const maxNamedObjects = 5

// nameObjects names up to maxNamedObjects objects and counts the rest.
func nameObjects(objs []*unstructured.Unstructured) string {
	names := make([]string, 0, maxNamedObjects)
	for i, obj := range objs {
		if i == maxNamedObjects {
			break
		}
		names = append(names, idOf(obj).String())
	}
	s := strings.Join(names, ", ")
	if more := len(objs) - len(names); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}
