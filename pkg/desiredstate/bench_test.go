package desiredstate

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// benchObjects is a rendered desired state of n objects, cycling through
// the kinds an application is made of, each about 0.5-2 KB of JSON.
func benchObjects(n int) []*unstructured.Unstructured {
	objs := make([]*unstructured.Unstructured, 0, n)
	for i := range n {
		name := fmt.Sprintf("app-%05d", i)
		ns := fmt.Sprintf("team-%02d", i%50)
		labels := map[string]any{"app.kubernetes.io/name": name, "app.kubernetes.io/part-of": "shop"}
		var o map[string]any
		switch i % 4 {
		case 0:
			o = map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "spec": map[string]any{
				"replicas": int64(2),
				"selector": map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": name}},
				"template": map[string]any{
					"metadata": map[string]any{"labels": labels},
					"spec": map[string]any{"containers": []any{map[string]any{
						"name": "app", "image": "registry.example.com/shop/" + name + ":1.4.2",
						"ports":     []any{map[string]any{"containerPort": int64(8080)}},
						"resources": map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "128Mi"}},
					}}},
				},
			}}
		case 1:
			o = map[string]any{"apiVersion": "v1", "kind": "Service", "spec": map[string]any{
				"selector": map[string]any{"app.kubernetes.io/name": name},
				"ports":    []any{map[string]any{"port": int64(80), "targetPort": int64(8080)}},
			}}
		case 2:
			var settings strings.Builder
			for k := range 25 {
				fmt.Fprintf(&settings, "feature.%d.enabled=%t\nfeature.%d.limit=%d\n", k, (i+k)%3 == 0, k, i*k)
			}
			o = map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"app.properties": settings.String()}}
		default:
			o = map[string]any{"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
				"data": map[string]any{"password": "cGFzc3dvcmQtMDAwMDAwMDAwMA==", "token": "dG9rZW4tMDAwMDAwMDAwMDAwMDA="}}
		}
		o["metadata"] = map[string]any{"name": name, "namespace": ns, "labels": labels}
		objs = append(objs, &unstructured.Unstructured{Object: o})
	}
	return objs
}

// canonicalSize is the size of the JSON Encode digests, for MB/s.
func canonicalSize(b *testing.B, objs []*unstructured.Unstructured) int64 {
	var size int64
	for _, obj := range objs {
		out, err := json.Marshal(obj.Object)
		if err != nil {
			b.Fatal(err)
		}
		size += int64(len(out)) + 1
	}
	return size
}

func BenchmarkEncode(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			objs := benchObjects(n)
			b.SetBytes(canonicalSize(b, objs))
			b.ReportAllocs()
			var data []byte
			for b.Loop() {
				var err error
				if data, _, err = Encode(objs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(data))/1024, "gzip-KB")
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			objs := benchObjects(n)
			data, _, err := Encode(objs)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(canonicalSize(b, objs))
			b.ReportAllocs()
			for b.Loop() {
				got, err := Decode(data)
				if err != nil {
					b.Fatal(err)
				}
				if len(got) != n {
					b.Fatalf("Decode() gave %d objects, want %d", len(got), n)
				}
			}
		})
	}
}
