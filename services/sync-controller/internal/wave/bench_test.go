package wave

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// benchDesiredState is n objects of the usual kinds, in random order,
// spread over five sync waves, with one pre-sync and one post-sync hook per
// hundred objects.
func benchDesiredState(n int) []*unstructured.Unstructured {
	kinds := [][2]string{
		{"apps/v1", "Deployment"}, {"v1", "Service"}, {"v1", "ConfigMap"}, {"v1", "Secret"},
		{"v1", "ServiceAccount"}, {"rbac.authorization.k8s.io/v1", "RoleBinding"},
		{"networking.k8s.io/v1", "Ingress"}, {"example.com/v1", "Widget"},
	}
	objs := make([]*unstructured.Unstructured, 0, n)
	for i := range n {
		k := kinds[i%len(kinds)]
		annotations := map[string]string{syncv1.SyncWaveAnnotation: fmt.Sprint(i%5 - 1)}
		switch i % 100 {
		case 7:
			k, annotations[syncv1.HookAnnotation] = [2]string{"batch/v1", "Job"}, "pre-sync"
		case 42:
			k, annotations[syncv1.ArgoHookAnnotation] = [2]string{"batch/v1", "Job"}, "PostSync"
		}
		objs = append(objs, object(k[0], k[1], fmt.Sprintf("team-%02d", i%50), fmt.Sprintf("app-%05d", i), annotations))
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(objs), func(i, j int) { objs[i], objs[j] = objs[j], objs[i] })
	return objs
}

// BenchmarkOrder orders a 10k-object desired state into hooks and waves.
func BenchmarkOrder(b *testing.B) {
	objs := benchDesiredState(10000)
	b.Run("objects=10000", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			groups, err := Order(objs)
			if err != nil {
				b.Fatal(err)
			}
			if len(groups.Waves) != 5 {
				b.Fatalf("Order() gave %d waves, want 5", len(groups.Waves))
			}
		}
		b.ReportMetric(float64(len(objs))*float64(b.N)/b.Elapsed().Seconds(), "objects/s")
	})
}
