package redact

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// benchDesiredState is n rendered objects, one in four a Secret with three
// values and the kubectl last-applied annotation, the others ConfigMaps.
func benchDesiredState(n int) []*unstructured.Unstructured {
	objs := make([]*unstructured.Unstructured, 0, n)
	for i := range n {
		name := fmt.Sprintf("app-%05d", i)
		var obj *unstructured.Unstructured
		if i%4 == 0 {
			obj = withLastApplied(secret(name, map[string]string{"password": password, "token": token}, map[string]string{"api-key": apiKey}))
		} else {
			obj = &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1",
				"kind":       "ConfigMap",
				"metadata":   map[string]any{"name": name, "namespace": "payments", "labels": map[string]any{"app": name}},
				"data":       map[string]any{"mode": "production", "endpoint": "https://" + name + ".example.com"},
			}}
		}
		objs = append(objs, obj)
	}
	return objs
}

// BenchmarkObject_DesiredState redacts every object of a 10k-object desired
// state, as showing or hashing it does.
func BenchmarkObject_DesiredState(b *testing.B) {
	objs := benchDesiredState(10000)
	b.Run("objects=10000", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, obj := range objs {
				Object(obj)
			}
		}
		b.ReportMetric(float64(len(objs))*float64(b.N)/b.Elapsed().Seconds(), "objects/s")
	})
}

// BenchmarkPair_Secrets redacts 2,500 live/desired Secret pairs, one value
// changed in each, as the plan diff of a 10k-object desired state does.
func BenchmarkPair_Secrets(b *testing.B) {
	var live, desired []*unstructured.Unstructured
	for _, obj := range benchDesiredState(10000) {
		if !IsSecret(obj) {
			continue
		}
		changed := obj.DeepCopy()
		changed.Object["stringData"] = map[string]any{"api-key": apiKey + "-rotated"}
		live, desired = append(live, obj), append(desired, changed)
	}
	b.Run(fmt.Sprintf("pairs=%d", len(live)), func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for i := range live {
				Pair(live[i], desired[i])
			}
		}
	})
}
