package memory

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/desiredstate"
)

// DriftWatches watches the kinds Applications manage, where the controller
// may list and watch them, so that a change to an applied object brings its
// Application back at once instead of at the next resync. Which objects
// belong to which Application is kept in memory, refreshed from the
// inventories each reconcile records; it only routes events, so losing it
// on a restart loses nothing: every Application reconciles at start.
type DriftWatches struct {
	controller controller.Controller
	cache      cache.Cache
	// recheck is how often a kind the controller may not watch is asked about again.
	recheck time.Duration

	mu sync.Mutex
	// checked says when a kind was last asked about.
	checked map[schema.GroupVersionKind]time.Time
	// watching are kinds with a watch.
	watching map[schema.GroupKind]bool
	// versions are the kinds with a watch, at the version watched.
	versions map[schema.GroupVersionKind]bool
	// byObject routes an object to the Applications that applied it.
	byObject map[desiredstate.ObjectID]map[types.NamespacedName]bool
	// byApplication are the objects last recorded for an Application.
	byApplication map[types.NamespacedName][]desiredstate.ObjectID
	// awaiting are the Applications waiting for their objects' health, woken
	// by any change to those objects, status included.
	awaiting map[types.NamespacedName]bool
}

// NewDriftWatches starts no watch yet: Watch does, kind by kind, on c with
// the metadata informers of ca. A kind the controller may not watch is due
// to be asked about again after recheck.
func NewDriftWatches(c controller.Controller, ca cache.Cache, recheck time.Duration) *DriftWatches {
	return &DriftWatches{
		controller:    c,
		cache:         ca,
		recheck:       recheck,
		checked:       make(map[schema.GroupVersionKind]time.Time),
		watching:      make(map[schema.GroupKind]bool),
		versions:      make(map[schema.GroupVersionKind]bool),
		byObject:      make(map[desiredstate.ObjectID]map[types.NamespacedName]bool),
		byApplication: make(map[types.NamespacedName][]desiredstate.ObjectID),
		awaiting:      make(map[types.NamespacedName]bool),
	}
}

// AwaitHealth marks app as waiting, or no longer waiting, for the health of
// its objects.
func (w *DriftWatches) AwaitHealth(app types.NamespacedName, waiting bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if waiting {
		w.awaiting[app] = true
	} else {
		delete(w.awaiting, app)
	}
}

// awaited reports whether an Application that applied id waits for its health.
func (w *DriftWatches) awaited(id desiredstate.ObjectID) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for app := range w.byObject[id] {
		if w.awaiting[app] {
			return true
		}
	}
	return false
}

// Watched reports whether gk has a watch.
func (w *DriftWatches) Watched(gk schema.GroupKind) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.watching[gk]
}

// Track records the objects an Application applied, replacing what was
// recorded before.
func (w *DriftWatches) Track(app types.NamespacedName, ids []desiredstate.ObjectID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, id := range w.byApplication[app] {
		delete(w.byObject[id], app)
		if len(w.byObject[id]) == 0 {
			delete(w.byObject, id)
		}
	}
	w.byApplication[app] = ids
	for _, id := range ids {
		if w.byObject[id] == nil {
			w.byObject[id] = make(map[types.NamespacedName]bool)
		}
		w.byObject[id][app] = true
	}
}

// Expect routes ids to app as well as what was recorded for it, and marks
// it waiting for their health. A rollout calls it before it reads their
// health: a change that lands after the read wakes it, and one that landed
// before is in what it reads. Marked after the read, a Deployment observed
// in between woke nothing and the rollout waited for the backstop.
func (w *DriftWatches) Expect(app types.NamespacedName, ids []desiredstate.ObjectID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.awaiting[app] = true
	for _, id := range ids {
		if w.byObject[id][app] {
			continue
		}
		if w.byObject[id] == nil {
			w.byObject[id] = make(map[types.NamespacedName]bool)
		}
		w.byObject[id][app] = true
		w.byApplication[app] = append(w.byApplication[app], id)
	}
}

// applicationsOf are the requests of the Applications that applied id.
func (w *DriftWatches) applicationsOf(id desiredstate.ObjectID) []reconcile.Request {
	w.mu.Lock()
	defer w.mu.Unlock()
	var reqs []reconcile.Request
	for app := range w.byObject[id] {
		reqs = append(reqs, reconcile.Request{NamespacedName: app})
	}
	return reqs
}

// Due returns the kinds among gvks not asked about within recheck (once,
// if recheck is 0), and marks them asked.
func (w *DriftWatches) Due(gvks []schema.GroupVersionKind, now time.Time) []schema.GroupVersionKind {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []schema.GroupVersionKind
	for _, gvk := range gvks {
		if w.watching[gvk.GroupKind()] {
			continue
		}
		last, seen := w.checked[gvk]
		if seen && (w.recheck <= 0 || now.Sub(last) < w.recheck) {
			continue
		}
		w.checked[gvk] = now
		out = append(out, gvk)
	}
	return out
}

// Forget makes gvk due again, after asking about it failed.
func (w *DriftWatches) Forget(gvk schema.GroupVersionKind) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.checked, gvk)
}

// Watch starts a metadata-only watch on gvk that brings back the
// Applications owning a changed or deleted object.
func (w *DriftWatches) Watch(gvk schema.GroupVersionKind) error {
	w.mu.Lock()
	if w.watching[gvk.GroupKind()] {
		w.mu.Unlock()
		return nil
	}
	w.watching[gvk.GroupKind()] = true
	w.versions[gvk] = true
	w.mu.Unlock()

	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(gvk)
	route := func(_ context.Context, o client.Object) []reconcile.Request {
		return w.applicationsOf(desiredstate.ObjectID{Group: gvk.Group, Kind: gvk.Kind, Namespace: o.GetNamespace(), Name: o.GetName()})
	}
	src := source.Kind(w.cache, client.Object(obj), coalescing(route),
		predicate.Or[client.Object](changedByUser(), w.healthChanged(gvk)))
	if err := w.controller.Watch(src); err != nil {
		w.mu.Lock()
		delete(w.watching, gvk.GroupKind())
		delete(w.versions, gvk)
		w.mu.Unlock()
		return fmt.Errorf("watching %s for drift: %w", gvk.GroupKind(), err)
	}
	return nil
}

// wakeCoalesce is how long the changes of an Application's objects are
// gathered into one reconcile: a Deployment's controller writes its status
// several times in a row, and each write woke the rollout.
const wakeCoalesce = time.Second

// coalescing enqueues the Applications route names for an event: at once
// for a deletion, after wakeCoalesce for an update, so that a burst of
// status writes to an Application's objects wakes it once.
func coalescing(route func(context.Context, client.Object) []reconcile.Request) handler.EventHandler {
	return handler.Funcs{
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			for _, req := range route(ctx, e.ObjectNew) {
				q.AddAfter(req, wakeCoalesce)
			}
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			for _, req := range route(ctx, e.Object) {
				q.Add(req)
			}
		},
	}
}

// CachedMetadata is obj's metadata as its kind's watch last saw it, if that
// kind is watched at obj's version and the object is in the cache. Other
// versions are never asked for: the cache would start a watch for them.
func (w *DriftWatches) CachedMetadata(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, bool) {
	m, watched, err := w.lookup(ctx, obj)
	if !watched || err != nil {
		return nil, false
	}
	gvk := obj.GroupVersionKind()
	out := &unstructured.Unstructured{}
	out.SetGroupVersionKind(gvk)
	out.SetNamespace(m.Namespace)
	out.SetName(m.Name)
	out.SetGeneration(m.Generation)
	out.SetDeletionTimestamp(m.DeletionTimestamp)
	return out, true
}

// Absent reports whether obj's kind is watched at obj's version and the
// watch has not seen obj: most likely it does not exist yet.
func (w *DriftWatches) Absent(ctx context.Context, obj *unstructured.Unstructured) bool {
	_, watched, err := w.lookup(ctx, obj)
	return watched && apierrors.IsNotFound(err)
}

// lookup reads obj's metadata from its kind's watch cache, if that kind is
// watched at obj's version.
func (w *DriftWatches) lookup(ctx context.Context, obj *unstructured.Unstructured) (m *metav1.PartialObjectMetadata, watched bool, err error) {
	gvk := obj.GroupVersionKind()
	w.mu.Lock()
	watched = w.versions[gvk]
	w.mu.Unlock()
	if !watched {
		return nil, false, nil
	}
	m = &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(gvk)
	return m, true, w.cache.Get(ctx, client.ObjectKeyFromObject(obj), m)
}

// healthChanged lets through any update, status included, of an object of
// kind gvk whose Application waits for its health.
func (w *DriftWatches) healthChanged(gvk schema.GroupVersionKind) predicate.Predicate {
	return predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			o := e.ObjectNew
			return w.awaited(desiredstate.ObjectID{Group: gvk.Group, Kind: gvk.Kind, Namespace: o.GetNamespace(), Name: o.GetName()})
		},
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// changedByUser lets through deletions and changes of what is applied:
// the spec (a new generation), or anything of kinds that keep no
// generation, and labels and annotations. Status updates, the initial list
// and the controller's own applies are left out, so drift checks run when
// something else could have made the object drift.
func changedByUser() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			before, after := e.ObjectOld, e.ObjectNew
			changed := after.GetGeneration() == 0 || before.GetGeneration() != after.GetGeneration() ||
				!maps.Equal(before.GetLabels(), after.GetLabels()) ||
				!maps.Equal(before.GetAnnotations(), after.GetAnnotations())
			return changed && !onlySyncWrote(before, after)
		},
		DeleteFunc:  func(event.DeleteEvent) bool { return true },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// onlySyncWrote reports whether the update from before to after was the
// sync-controller's own: the managedFields entries it changed are all
// kuvryn-sync's. A write by anyone else changes or adds an entry of theirs.
func onlySyncWrote(before, after client.Object) bool {
	previous := map[string]metav1.ManagedFieldsEntry{}
	for _, f := range before.GetManagedFields() {
		previous[managedFieldsKey(f)] = f
	}
	changed := 0
	for _, f := range after.GetManagedFields() {
		if old, ok := previous[managedFieldsKey(f)]; ok && equality.Semantic.DeepEqual(old, f) {
			continue
		}
		if f.Manager != syncv1.FieldManagerSync {
			return false
		}
		changed++
	}
	return changed > 0
}

func managedFieldsKey(f metav1.ManagedFieldsEntry) string {
	return f.Manager + "\x00" + string(f.Operation) + "\x00" + f.Subresource
}
