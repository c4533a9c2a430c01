package revision

import (
	"context"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// freshReads reads Applications and Revisions from the manager's cache when
// the cache's copy is at least as new as the newest version this controller
// has seen of them, and from the API server otherwise. A rollout resumes
// from what it recorded, so a copy older than its own last status write
// would make it repeat a step: start an attempt again and take that
// attempt's hooks for an earlier one's. Reading every one from the API
// server instead was a third of a large rollout's requests, and reading
// again every copy another controller had written since (the
// source-controller's desired Revision) was most of the rest
// (docs/benchmarks.md).
//
// Resource versions of one resource are compared as the API server orders
// them (k8s.io/apimachinery/pkg/util/resourceversion); one that is not a
// well-formed version counts as fresh only when it equals the version seen.
// An Application this controller has not seen yet is read from the cache:
// the cache has watched since before this process wrote anything, so it
// misses none of its writes, it listed after any earlier process's, and it
// holds the change that woke the reconcile. A Revision not seen yet is read
// from the cache only when it is the Application's desired one and records
// the commit the Application names as rendered (status.source): what woke
// the reconcile was the Application's change, which the source-controller
// writes after the Revision's status, and another watch may not have
// delivered that yet. Any other Revision not seen yet is read from the API
// server.
//
// The cache is the Reconciler's Client, the API server its APIReader.
type freshReads struct {
	// seen maps a freshKey to the resourceVersion last read or produced by
	// this controller's write.
	seen sync.Map
}

// freshKey names an object of one of the two kinds.
type freshKey struct {
	revision bool
	name     types.NamespacedName
}

func keyOf(obj client.Object, name types.NamespacedName) freshKey {
	_, isRevision := obj.(*syncv1.Revision)
	return freshKey{revision: isRevision, name: name}
}

// readFresh reads the Application or Revision name. A cached copy of one
// not seen yet is used if unseenFresh, when set, accepts it. Each read
// decodes into a new object: decoding into one already filled would keep
// the fields the newer copy leaves out.
func readFresh[T any, P interface {
	*T
	client.Object
}](ctx context.Context, r *Reconciler, name types.NamespacedName, unseenFresh func(P) bool) (P, error) {
	f := &r.reads
	obj := P(new(T))
	k := keyOf(obj, name)
	if seen, known := f.seen.Load(k); known || unseenFresh != nil {
		if err := r.Client.Get(ctx, name, obj); err == nil && (known && atLeast(obj.GetResourceVersion(), seen.(string)) || !known && unseenFresh(obj)) {
			f.seen.Store(k, obj.GetResourceVersion())
			return obj, nil
		}
		obj = P(new(T))
	}
	if err := r.APIReader.Get(ctx, name, obj); err != nil {
		if apierrors.IsNotFound(err) {
			f.seen.Delete(k)
		}
		return nil, err
	}
	f.seen.Store(k, obj.GetResourceVersion())
	return obj, nil
}

// atLeast tells whether resourceVersion a is as new as b or newer.
func atLeast(a, b string) bool {
	c, err := resourceversion.CompareResourceVersion(a, b)
	if err != nil {
		return a == b
	}
	return c >= 0
}

// wrote notes the version this controller's write of obj produced.
func (f *freshReads) wrote(obj client.Object) {
	f.seen.Store(keyOf(obj, client.ObjectKeyFromObject(obj)), obj.GetResourceVersion())
}

// forget drops what was seen of obj, once it is deleted.
func (f *freshReads) forget(obj client.Object) {
	f.seen.Delete(keyOf(obj, client.ObjectKeyFromObject(obj)))
}

// readApplication reads the Application name; a cached copy not seen yet is
// always fresh (see freshReads).
func (r *Reconciler) readApplication(ctx context.Context, name types.NamespacedName) (*syncv1.Application, error) {
	return readFresh(ctx, r, name, anyCopy)
}

// anyCopy accepts every cached copy of an Application not seen yet.
func anyCopy(*syncv1.Application) bool { return true }

// readRevision reads a Revision other than the desired one.
func (r *Reconciler) readRevision(ctx context.Context, namespace, name string) (*syncv1.Revision, error) {
	return readFresh[syncv1.Revision](ctx, r, types.NamespacedName{Namespace: namespace, Name: name}, nil)
}

// readDesiredRevision reads app's desired Revision name.
func (r *Reconciler) readDesiredRevision(ctx context.Context, app *syncv1.Application, name string) (*syncv1.Revision, error) {
	commit := app.Status.SourceCommit
	return readFresh(ctx, r, types.NamespacedName{Namespace: app.Namespace, Name: name}, func(rev *syncv1.Revision) bool {
		return commit != "" && rev.Status.Source != nil && rev.Status.Source.Commit == commit
	})
}
