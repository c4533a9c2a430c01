package plan

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// benchConfigMap is the dry-run of ConfigMap i: about 3 KB of settings, as
// real configuration is; version changes one line of it.
func benchConfigMap(i, version int) *unstructured.Unstructured {
	var settings strings.Builder
	for k := range 60 {
		fmt.Fprintf(&settings, "service.%02d.endpoint=https://svc-%02d.example.com:8443/api\n", k, k)
	}
	fmt.Fprintf(&settings, "release=%d\n", version)
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata": map[string]any{
			"name":      fmt.Sprintf("settings-%05d", i),
			"namespace": fmt.Sprintf("team-%02d", i%50),
			"labels":    map[string]any{"app.kubernetes.io/name": "shop", "app.kubernetes.io/instance": fmt.Sprint(i)},
		},
		"data": map[string]any{"app.properties": settings.String(), "mode": "production"},
	}}
}

// benchServed is obj as the API server returns it, with the metadata
// Normalize drops.
func benchServed(obj *unstructured.Unstructured) *unstructured.Unstructured {
	out := obj.DeepCopy()
	meta := out.Object["metadata"].(map[string]any)
	meta["uid"] = "8d1f5b7c-3f8e-4d55-9a7e-2c1f0e6b9a10"
	meta["resourceVersion"] = "48213"
	meta["creationTimestamp"] = "2025-01-01T00:00:00Z"
	meta["managedFields"] = []any{map[string]any{
		"manager": syncv1.FieldManagerSync, "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1",
		"fieldsV1": map[string]any{
			"f:data":     map[string]any{"f:app.properties": map[string]any{}, "f:mode": map[string]any{}},
			"f:metadata": map[string]any{"f:labels": map[string]any{"f:app.kubernetes.io/name": map[string]any{}, "f:app.kubernetes.io/instance": map[string]any{}}},
		},
	}}
	return out
}

// benchEntries plans n ConfigMaps, every tenth of them changed.
func benchEntries(b *testing.B, n int) []Entry {
	entries := make([]Entry, 0, n)
	for i := range n {
		version := 1
		if i%10 == 0 {
			version = 2
		}
		e, err := NewEntry(benchServed(benchConfigMap(i, 1)), benchServed(benchConfigMap(i, version)))
		if err != nil {
			b.Fatal(err)
		}
		entries = append(entries, e)
	}
	return entries
}

// BenchmarkNewEntry is the planning work per object, once its live state
// and dry-run have been read: normalise, hash both sides and, for a change,
// a redacted unified diff.
func BenchmarkNewEntry(b *testing.B) {
	live := benchServed(benchConfigMap(1, 1))
	tests := []struct {
		name         string
		live, dryRun *unstructured.Unstructured
	}{
		{"action=unchanged", live, benchServed(benchConfigMap(1, 1))},
		{"action=update", live, benchServed(benchConfigMap(1, 2))},
		{"action=create", nil, benchServed(benchConfigMap(1, 1))},
	}
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := NewEntry(tt.live, tt.dryRun); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPlan_Objects plans a whole desired state: one NewEntry per
// object (a tenth of them changed) and Build, as a Revision of that many
// objects costs the controller besides its API calls.
func BenchmarkPlan_Objects(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			pairs := make([][2]*unstructured.Unstructured, n)
			for i := range pairs {
				version := 1
				if i%10 == 0 {
					version = 2
				}
				pairs[i] = [2]*unstructured.Unstructured{benchServed(benchConfigMap(i, 1)), benchServed(benchConfigMap(i, version))}
			}
			b.ReportAllocs()
			for b.Loop() {
				entries := make([]Entry, 0, n)
				for _, p := range pairs {
					e, err := NewEntry(p[0], p[1])
					if err != nil {
						b.Fatal(err)
					}
					entries = append(entries, e)
				}
				if p := Build(entries); p.Summary.Update != int32(n/10) {
					b.Fatalf("Build() planned %d updates, want %d", p.Summary.Update, n/10)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "objects/s")
		})
	}
}

// BenchmarkBuild bounds 10k planned entries into the status Plan: digest,
// summary, ordering and truncation to syncv1.MaxPlanEntries.
func BenchmarkBuild(b *testing.B) {
	entries := benchEntries(b, 10000)
	b.Run("entries=10000", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if p := Build(entries); !p.Truncated {
				b.Fatal("Build() kept every one of 10000 entries")
			}
		}
	})
}

// BenchmarkDigest is the digest that approvals bind to, over 10k entries.
func BenchmarkDigest(b *testing.B) {
	entries := benchEntries(b, 10000)
	b.Run("entries=10000", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Digest(entries)
		}
	})
}
