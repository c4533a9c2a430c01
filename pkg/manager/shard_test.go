package manager

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

func TestShard_CacheSelectsOnlyTheShardsObjectsAndKeepsEachKindsTransform(t *testing.T) {
	narrow := func(o any) (any, error) { return o, nil }
	rev := &syncv1.Revision{}
	by := shardCache(map[client.Object]cache.ByObject{rev: {Transform: narrow}},
		[]client.Object{&syncv1.Application{}, &syncv1.Revision{}}, "a")
	if len(by) != 2 {
		t.Fatalf("%d kinds narrowed, want 2: %v", len(by), by)
	}
	if by[rev].Transform == nil {
		t.Error("the Revision cache lost its own transform")
	}
	for obj, b := range by {
		if b.Label == nil || !b.Label.Matches(labels.Set{syncv1.ShardLabel: "a"}) || b.Label.Matches(labels.Set{}) {
			t.Errorf("%T selects %v, want shard a only", obj, b.Label)
		}
	}
	if got := shardCache(nil, nil, "a"); got != nil {
		t.Errorf("a service without sharded kinds narrows %v", got)
	}
}

func TestShard_EachShardElectsItsOwnLeader(t *testing.T) {
	for _, tc := range []struct{ id, shard, want string }{
		{"", "", "kuvryn-sync-controller-manager"},
		{"", "a", "kuvryn-sync-controller-manager-a"},
		{"release-kuvryn-sync-a", "a", "release-kuvryn-sync-a"},
	} {
		if got := leaseName(tc.id, "sync-controller", tc.shard); got != tc.want {
			t.Errorf("leaseName(%q, %q) = %q, want %q", tc.id, tc.shard, got, tc.want)
		}
	}
}

func TestShard_RefusesAShardThatIsNotALabelValue(t *testing.T) {
	for shard, ok := range map[string]bool{"": true, "a": true, "tenant-1": true, "a/b": false, "-a": false} {
		if err := validShard(shard); (err == nil) != ok {
			t.Errorf("validShard(%q) = %v", shard, err)
		}
	}
}

func TestShard_EveryMetricCarriesTheShardLabel(t *testing.T) {
	saved := metrics.Registry
	t.Cleanup(func() { metrics.Registry = saved })
	metrics.Registry = prometheus.NewRegistry()
	early := prometheus.NewCounter(prometheus.CounterOpts{Name: "registered_before"})
	metrics.Registry.MustRegister(early)
	labelMetricsWithShard("a")
	labelMetricsWithShard("a")
	late := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "registered_after"}, []string{"result"})
	metrics.Registry.MustRegister(late)
	late.WithLabelValues("ok").Inc()

	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(families) != 2 {
		t.Fatalf("%d families, want 2", len(families))
	}
	for _, f := range families {
		for _, m := range f.Metric {
			shards := 0
			for _, l := range m.Label {
				if l.GetName() == "shard" {
					shards++
					if l.GetValue() != "a" {
						t.Errorf("%s: shard=%q", f.GetName(), l.GetValue())
					}
				}
			}
			if shards != 1 {
				t.Errorf("%s has %d shard labels, want 1", f.GetName(), shards)
			}
		}
	}
}

func TestShard_UnstructuredKindsAreToldApartByTheirKind(t *testing.T) {
	repo, app := &unstructured.Unstructured{}, &unstructured.Unstructured{}
	repo.SetGroupVersionKind(syncv1.GroupVersion.WithKind("Repository"))
	app.SetGroupVersionKind(syncv1.GroupVersion.WithKind("Application"))
	by := shardCache(map[client.Object]cache.ByObject{app: {}}, []client.Object{repo}, "")
	if len(by) != 2 || by[app].Label != nil || by[repo].Label == nil {
		t.Errorf("narrowing unstructured Repositories changed %v", by)
	}
}
