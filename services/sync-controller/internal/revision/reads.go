package revision

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/memory"
)

// readFresh reads the Application or Revision name from the manager's cache when
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
// them (memory.AtLeast). An Application this controller has not seen yet is read from the cache:
// the cache has watched since before this process wrote anything, so it
// misses none of its writes, it listed after any earlier process's, and it
// holds the change that woke the reconcile. So is the Application's desired
// Revision when the cache holds it: its spec is immutable, complete from its
// creation, and only the sync-controller writes its status, so any cached
// copy of it is as fresh as one read from the API server. One the cache does
// not hold yet (the source-controller creates it before naming it on the
// Application, and another watch delivers it) is read from the API server,
// as is any other Revision not seen yet.
//
// The cache is the Reconciler's Client, the API server its APIReader, and
// the versions seen are kept in r.versions. A cached copy of one not seen
// yet is used if unseenFresh, when set, accepts it. Each read
// decodes into a new object: decoding into one already filled would keep
// the fields the newer copy leaves out.
func readFresh[T any, P interface {
	*T
	client.Object
}](ctx context.Context, r *Reconciler, name types.NamespacedName, unseenFresh func(P) bool) (P, error) {
	obj := P(new(T))
	k := versionKey(obj, name)
	if seen, known := r.versions.Seen(k); known || unseenFresh != nil {
		if err := r.Client.Get(ctx, name, obj); err == nil && (known && memory.AtLeast(obj.GetResourceVersion(), seen) || !known && unseenFresh(obj)) {
			r.versions.Saw(k, obj.GetResourceVersion())
			return obj, nil
		}
		obj = P(new(T))
	}
	if err := r.APIReader.Get(ctx, name, obj); err != nil {
		if apierrors.IsNotFound(err) {
			r.versions.Forget(k)
		}
		return nil, err
	}
	r.versions.Saw(k, obj.GetResourceVersion())
	return obj, nil
}

// versionKey is the key of the Application or Revision name in r.versions.
func versionKey(obj client.Object, name types.NamespacedName) memory.Key {
	_, isRevision := obj.(*syncv1.Revision)
	return memory.Key{Revision: isRevision, Name: name}
}

// wrote notes the version this controller's write of obj produced.
func (r *Reconciler) wrote(obj client.Object) {
	r.versions.Saw(versionKey(obj, client.ObjectKeyFromObject(obj)), obj.GetResourceVersion())
}

// forgetVersion drops what was seen of obj, once it is deleted.
func (r *Reconciler) forgetVersion(obj client.Object) {
	r.versions.Forget(versionKey(obj, client.ObjectKeyFromObject(obj)))
}

// readApplication reads the Application name; a cached copy not seen yet is
// always fresh (see readFresh).
func (r *Reconciler) readApplication(ctx context.Context, name types.NamespacedName) (*syncv1.Application, error) {
	return readFresh(ctx, r, name, anyCopy[*syncv1.Application])
}

// anyCopy accepts every cached copy not seen yet.
func anyCopy[P client.Object](P) bool { return true }

// readRevision reads a Revision other than the desired one.
func (r *Reconciler) readRevision(ctx context.Context, namespace, name string) (*syncv1.Revision, error) {
	return readFresh[syncv1.Revision](ctx, r, types.NamespacedName{Namespace: namespace, Name: name}, nil)
}

// readDesiredRevision reads app's desired Revision name; a cached copy not
// seen yet is always fresh (see readFresh).
func (r *Reconciler) readDesiredRevision(ctx context.Context, app *syncv1.Application, name string) (*syncv1.Revision, error) {
	return readFresh(ctx, r, types.NamespacedName{Namespace: app.Namespace, Name: name}, anyCopy[*syncv1.Revision])
}
