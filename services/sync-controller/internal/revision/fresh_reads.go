package revision

import (
	"context"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// freshReads reads Applications and Revisions from the manager's cache when
// the cache holds the newest version this controller has seen of them, and
// from the API server otherwise. A rollout resumes from what it recorded, so
// a copy older than its own last status write would make it repeat a step:
// start an attempt again and take that attempt's hooks for an earlier one's.
// Reading every one from the API server instead was a third of a large
// rollout's requests (docs/benchmarks.md).
//
// Versions are compared for equality only, as resourceVersions are opaque:
// a cached copy at the version last seen is as new as anything this
// controller wrote; one at any other version is either older or holds
// someone else's later write, and is read again from the API server.
//
// The cache is the Reconciler's Client, the API server its APIReader.
type freshReads struct {
	// seen maps a freshKey to the resourceVersion last read from the API
	// server or produced by this controller's write.
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

// readFresh reads the Application or Revision name. Each read decodes into
// a new object: decoding into one already filled would keep the fields the
// newer copy leaves out.
func readFresh[T any, P interface {
	*T
	client.Object
}](ctx context.Context, r *Reconciler, name types.NamespacedName) (P, error) {
	f := &r.reads
	obj := P(new(T))
	k := keyOf(obj, name)
	if rv, ok := f.seen.Load(k); ok {
		if err := r.Client.Get(ctx, name, obj); err == nil && obj.GetResourceVersion() == rv {
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

// wrote notes the version this controller's write of obj produced.
func (f *freshReads) wrote(obj client.Object) {
	f.seen.Store(keyOf(obj, client.ObjectKeyFromObject(obj)), obj.GetResourceVersion())
}

// forget drops what was seen of obj, once it is deleted.
func (f *freshReads) forget(obj client.Object) {
	f.seen.Delete(keyOf(obj, client.ObjectKeyFromObject(obj)))
}

func (r *Reconciler) readApplication(ctx context.Context, name types.NamespacedName) (*syncv1.Application, error) {
	return readFresh[syncv1.Application](ctx, r, name)
}

func (r *Reconciler) readRevision(ctx context.Context, namespace, name string) (*syncv1.Revision, error) {
	return readFresh[syncv1.Revision](ctx, r, types.NamespacedName{Namespace: namespace, Name: name})
}
