package planner

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/desired"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/wave"
)

// PruneCandidates are the live objects Kuvryn Sync applied in earlier
// attempts that left the desired state, in reverse apply order. Earlier
// attempts are the deployed Revision and every attempt since, failed or
// superseded ones included, so that what they created is not left behind.
// Objects someone else has taken over entirely, or another Application
// now owns, are left alone.
func (p *Planner) PruneCandidates(ctx context.Context, s *Scope, ds *desired.State) ([]*unstructured.Unstructured, error) {
	entries, err := p.priorInventory(ctx, s)
	if err != nil {
		return nil, err
	}
	var stale []*unstructured.Unstructured
	for _, entry := range entries {
		obj, err := ParseInventoryEntry(entry)
		if err != nil {
			ctrl.LoggerFrom(ctx).Info("ignoring unreadable inventory entry", "error", err.Error())
			continue
		}
		if ds.IDs[IDOf(obj)] {
			continue
		}
		live, err := GetLive(ctx, s.Client, obj)
		if errors.Is(err, ErrKindNotServed) {
			// Its kind is gone, and every object of it with it.
			continue
		}
		if err != nil {
			return nil, err
		}
		if live == nil || !ManagedBySync(live) || s.OwnedByAnother(live) != "" {
			continue
		}
		stale = append(stale, live)
	}
	sort.SliceStable(stale, func(i, j int) bool {
		oi, oj := wave.KindOrder(stale[i].GroupVersionKind()), wave.KindOrder(stale[j].GroupVersionKind())
		if oi != oj {
			return oi > oj
		}
		return IDOf(stale[i]).String() < IDOf(stale[j]).String()
	})
	return stale, nil
}

// priorInventory is the union of the inventories of the deployed Revision
// and of every attempt recorded after it.
func (p *Planner) priorInventory(ctx context.Context, s *Scope) ([]string, error) {
	var names []string
	for _, h := range s.App.Status.History {
		names = append(names, h.Revision)
		if h.Result == syncv1.PhaseHealthy {
			break
		}
	}
	names = append(names, s.App.Status.DeployedRevision)

	seen := map[string]bool{"": true, s.Rev.Name: true}
	have := map[string]bool{}
	var entries []string
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		rev := &syncv1.Revision{}
		if err := p.Cache.Get(ctx, types.NamespacedName{Namespace: s.App.Namespace, Name: name}, rev); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("reading inventory of Revision %s/%s: %w", s.App.Namespace, name, err)
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

// MaxNamedObjects is how many objects a prune message or Event names.
const MaxNamedObjects = 5

// NameObjects names up to MaxNamedObjects objects and counts the rest.
func NameObjects(objs []*unstructured.Unstructured) string {
	names := make([]string, 0, MaxNamedObjects)
	for i, obj := range objs {
		if i == MaxNamedObjects {
			break
		}
		names = append(names, IDOf(obj).String())
	}
	s := strings.Join(names, ", ")
	if more := len(objs) - len(names); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}
