package revision

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// observation is one change the API server reported, in the order of the
// etcd revisions that wrote it.
type observation struct {
	kind, name string
	added      bool
	rv         uint64
	obj        *unstructured.Unstructured
}

// recorder watches kinds in a namespace and keeps every change.
type recorder struct {
	t   *testing.T
	mu  sync.Mutex
	obs []observation
}

// watchKinds starts watches on kinds (as "apiVersion/Kind" GVKs) in ns
// before anything is applied, and stops them at the end of the test.
func watchKinds(t *testing.T, ns string, gvks ...schema.GroupVersionKind) *recorder {
	t.Helper()
	rec := &recorder{t: t}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	for _, gvk := range gvks {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		w, err := admin.Watch(ctx, list, client.InNamespace(ns))
		must(t, err)
		go func(kind string) {
			defer w.Stop()
			for ev := range w.ResultChan() {
				obj, ok := ev.Object.(*unstructured.Unstructured)
				if !ok || (ev.Type != watch.Added && ev.Type != watch.Modified) {
					continue
				}
				rec.mu.Lock()
				rec.obs = append(rec.obs, observation{
					kind: kind, name: obj.GetName(), added: ev.Type == watch.Added,
					rv: resourceVersion(t, obj), obj: obj,
				})
				rec.mu.Unlock()
			}
		}(gvk.Kind)
	}
	return rec
}

// first is the etcd revision of the first change to kind/name that
// satisfies cond; it fails the test if there was none.
func (r *recorder) first(kind, name, what string, cond func(observation) bool) uint64 {
	r.t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, o := range r.obs {
		if o.kind == kind && o.name == name && cond(o) {
			return o.rv
		}
	}
	r.t.Fatalf("no change to %s %s where it %s was observed", kind, name, what)
	return 0
}

// created is the etcd revision that created kind/name.
func (r *recorder) created(kind, name string) uint64 {
	r.t.Helper()
	return r.first(kind, name, "was created", func(o observation) bool { return o.added })
}

// creations counts how often kind/name was created.
func (r *recorder) creations(kind, name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, o := range r.obs {
		if o.kind == kind && o.name == name && o.added {
			n++
		}
	}
	return n
}

func (r *recorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, o := range r.obs {
		fmt.Fprintf(&b, "%d %s %s added=%v\n", o.rv, o.kind, o.name, o.added)
	}
	return b.String()
}

// hasCondition reports whether obj has condition typ with status True.
func hasCondition(obj *unstructured.Unstructured, typ string) bool {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if ok && m["type"] == typ && m["status"] == "True" {
			return true
		}
	}
	return false
}
