package revision

import (
	"context"
	"sync/atomic"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/pkg/ssa"
)

// countingReader counts the reads that reach the API server.
type countingReader struct {
	client.Reader
	gets atomic.Int32
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.gets.Add(1)
	return c.Reader.Get(ctx, key, obj, opts...)
}

// cachedReconciler is a Reconciler reading through a real informer cache of
// ns, which stop freezes, and counting its API server reads.
func cachedReconciler(t *testing.T, ns string) (r *Reconciler, api *countingReader, stop func()) {
	t.Helper()
	c, err := cache.New(cp.Config, cache.Options{Scheme: manager.Scheme(), DefaultNamespaces: map[string]cache.Config{ns: {}}})
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = c.Start(ctx) }()
	// Informers start on first use; a List of each kind starts and syncs them.
	must(t, c.List(t.Context(), &syncv1.ApplicationList{}))
	must(t, c.List(t.Context(), &syncv1.RevisionList{}))
	cached, err := client.New(cp.Config, client.Options{Scheme: manager.Scheme(), Cache: &client.CacheOptions{Reader: c}})
	must(t, err)
	api = &countingReader{Reader: admin}
	return &Reconciler{Client: cached, APIReader: api}, api, cancel
}

// TestFreshReads_ACachedCopyOlderThanTheLastWriteIsReadFromTheAPIServer:
// a rollout resumes from what it recorded, so after a status write the
// cached Application is used only once it holds that write; until then it
// is read from the API server, and once the cache has caught up it is read
// from the cache alone. Anyone else's later write is newer than what was
// seen, and the cache's copy of it is used as is.
func TestFreshReads_ACachedCopyOlderThanTheLastWriteIsReadFromTheAPIServer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createApplication("shop", nil)
	r, api, _ := cachedReconciler(t, e.ns)
	key := client.ObjectKey{Namespace: e.ns, Name: "shop"}
	read := func() (*syncv1.Application, int32) {
		t.Helper()
		before := api.gets.Load()
		app, err := r.readApplication(t.Context(), key)
		must(t, err)
		return app, api.gets.Load() - before
	}

	// The first read of an Application is from the cache, which holds the
	// change that woke the reconcile.
	app, gets := read()
	if gets != 0 {
		t.Fatalf("first read made %d API server reads, want 0", gets)
	}

	// This controller's write: the next reads are from the API server until
	// the cache holds it, and they always see it.
	app.Status.Phase = syncv1.PhaseApplying
	must(t, ssa.ApplyStatus(t.Context(), r.Client, app, syncv1.FieldManagerSync, ownedApplicationStatus(app)))
	r.wrote(app)
	written := app.ResourceVersion
	eventually(t, "the cache to hold the write", func() bool {
		got, gets := read()
		if got.ResourceVersion != written || got.Status.Phase != syncv1.PhaseApplying {
			t.Fatalf("read resourceVersion %s phase %q after the write, want %s Applying", got.ResourceVersion, got.Status.Phase, written)
		}
		return gets == 0
	}, nil)

	// A frozen cache never holds the next write, so every read of it is
	// from the API server, and sees it.
	r, api, stop := cachedReconciler(t, e.ns)
	app, _ = read()
	eventually(t, "the new cache to serve the Application", func() bool { _, gets := read(); return gets == 0 }, nil)
	stop()
	app.Status.Phase = syncv1.PhaseHealthy
	must(t, ssa.ApplyStatus(t.Context(), r.Client, app, syncv1.FieldManagerSync, ownedApplicationStatus(app)))
	r.wrote(app)
	for range 3 {
		if got, gets := read(); gets != 1 || got.Status.Phase != syncv1.PhaseHealthy {
			t.Fatalf("read of a cache older than the write: phase %q with %d API server reads, want Healthy with 1", got.Status.Phase, gets)
		}
	}

	// Someone else's write is newer than anything this controller saw: once
	// the cache holds it, it is read from the cache.
	r, api, _ = cachedReconciler(t, e.ns)
	app, _ = read()
	app.Annotations = map[string]string{syncv1.ApprovedByAnnotation: "carol"}
	must(t, admin.Update(t.Context(), app))
	eventually(t, "another's write to be read", func() bool {
		got, gets := read()
		if gets != 0 {
			t.Fatalf("a read after another's write made %d API server reads, want 0", gets)
		}
		return got.Annotations[syncv1.ApprovedByAnnotation] == "carol"
	}, nil)

	// A deleted object is forgotten.
	must(t, admin.Delete(t.Context(), app))
	eventually(t, "the deletion to be read", func() bool {
		_, err := r.readApplication(t.Context(), key)
		return apierrors.IsNotFound(err)
	}, nil)
	if _, ok := r.versions.Seen(versionKey(app, key)); ok {
		t.Error("a deleted Application is still remembered")
	}
}

// TestFreshReads_ADesiredRevisionNotSeenYetIsReadFromTheCache: a
// Revision's spec is immutable and only the sync-controller writes its
// status, so the first read of the desired Revision uses any copy the cache
// holds, and reads one the cache does not hold yet from the API server. Any
// other Revision not seen yet is read from the API server. The reads after
// the first use the cache once it holds what was read.
func TestFreshReads_ADesiredRevisionNotSeenYetIsReadFromTheCache(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createApplication("shop", nil)
	cachedName := e.publish("shop", configMap(t, "shop-config"))

	for _, tc := range []struct {
		name     string
		desired  bool
		cached   bool
		wantGets int32
	}{
		{name: "the desired Revision, in the cache", desired: true, cached: true, wantGets: 0},
		{name: "the desired Revision, not in the cache yet", desired: true, wantGets: 1},
		{name: "another Revision, in the cache", cached: true, wantGets: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, api, stop := cachedReconciler(t, e.ns)
			name := cachedName
			if !tc.cached {
				// A frozen cache never sees the Revision created after it.
				stop()
				name = e.createRevision("shop", nil, configMap(t, "shop-later"))
			}
			app := e.application("shop")
			app.Status.DesiredRevision = name
			if tc.cached {
				eventually(t, "the cache to hold the Revision", func() bool {
					return r.Client.Get(t.Context(), client.ObjectKey{Namespace: e.ns, Name: name}, &syncv1.Revision{}) == nil
				}, nil)
			}
			read := func() int32 {
				t.Helper()
				before := api.gets.Load()
				var got *syncv1.Revision
				var err error
				if tc.desired {
					got, err = r.readDesiredRevision(t.Context(), app, name)
				} else {
					got, err = r.readRevision(t.Context(), e.ns, name)
				}
				must(t, err)
				if got.Name != name || got.Spec.ApplicationName != "shop" || got.Spec.DesiredState.SecretName == "" {
					t.Fatalf("read Revision %s with spec %+v, want %s of shop with its desired state", got.Name, got.Spec, name)
				}
				return api.gets.Load() - before
			}
			if gets := read(); gets != tc.wantGets {
				t.Fatalf("first read of the Revision made %d API server reads, want %d", gets, tc.wantGets)
			}
			if !tc.cached {
				return
			}
			if gets := read(); gets != 0 {
				t.Fatalf("second read of the Revision made %d API server reads, want 0 once the cache holds what was read", gets)
			}
		})
	}
}
