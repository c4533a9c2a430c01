package manager

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// validShard refuses a --shard that cannot be a label value.
func validShard(shard string) error {
	if errs := validation.IsValidLabelValue(shard); len(errs) > 0 {
		return fmt.Errorf("--shard %q is not a value of the label %s: %s", shard, syncv1.ShardLabel, strings.Join(errs, "; "))
	}
	return nil
}

// shardCache narrows the cache of each sharded kind to the shard's objects,
// so that a shard's informers hold its slice and not the cluster's.
func shardCache(by map[client.Object]cache.ByObject, kinds []client.Object, shard string) map[client.Object]cache.ByObject {
	if len(kinds) == 0 {
		return by
	}
	out := make(map[client.Object]cache.ByObject, len(by)+len(kinds))
	for obj, b := range by {
		out[obj] = b
	}
	for _, kind := range kinds {
		key := client.Object(kind)
		for obj := range out {
			if sameKind(obj, kind) {
				key = obj
			}
		}
		b := out[key]
		b.Label = syncv1.ShardSelector(shard)
		out[key] = b
	}
	return out
}

// sameKind reports whether two cache keys are the same kind: the same Go
// type, and for unstructured objects the same group, version and kind.
func sameKind(a, b client.Object) bool {
	if reflect.TypeOf(a) != reflect.TypeOf(b) {
		return false
	}
	ua, ok := a.(*unstructured.Unstructured)
	return !ok || ua.GroupVersionKind() == b.(*unstructured.Unstructured).GroupVersionKind()
}

// leaseName is the leader-election Lease of a service in a shard: one per
// shard, so that each shard elects its own leader.
func leaseName(id, service, shard string) string {
	if id != "" {
		return id
	}
	if shard == "" {
		return InstallName(service)
	}
	return InstallName(service) + "-" + shard
}

// labelMetricsWithShard makes every metric the process exports carry the
// constant label shard="<shard>", whenever and wherever it was registered
// (controller-runtime and client-go register theirs at init).
func labelMetricsWithShard(shard string) {
	if shard == "" {
		return
	}
	if _, done := metrics.Registry.(shardGatherer); done {
		return
	}
	metrics.Registry = shardGatherer{RegistererGatherer: metrics.Registry, shard: shard}
}

// shardGatherer adds the shard label at gather time.
type shardGatherer struct {
	metrics.RegistererGatherer
	shard string
}

func (g shardGatherer) Gather() ([]*dto.MetricFamily, error) {
	families, err := g.RegistererGatherer.Gather()
	name := "shard"
	for _, f := range families {
		for _, m := range f.Metric {
			m.Label = append(m.Label, &dto.LabelPair{Name: &name, Value: &g.shard})
		}
	}
	return families, err
}

var _ prometheus.Gatherer = shardGatherer{}
