package plan

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/redact"
)

func TestDiff_IsUnifiedDiffOfNormalisedYAML(t *testing.T) {
	live := asServed(configMap(map[string]any{"mode": "fast", "size": "1"}))
	tests := []struct {
		name         string
		live, dryRun *unstructured.Unstructured
		want         string
	}{
		{
			name:   "update",
			live:   live,
			dryRun: asServed(configMap(map[string]any{"mode": "slow", "size": "1"})),
			want: `--- live
+++ desired
@@ -1,6 +1,6 @@
 apiVersion: v1
 data:
-  mode: fast
+  mode: slow
   size: "1"
 kind: ConfigMap
 metadata:
`,
		},
		{
			name:   "create diffs from nothing",
			dryRun: asServed(configMap(map[string]any{"mode": "fast"})),
			want: `--- live
+++ desired
@@ -0,0 +1,7 @@
+apiVersion: v1
+data:
+  mode: fast
+kind: ConfigMap
+metadata:
+  name: settings
+  namespace: payments
`,
		},
		{
			name: "delete diffs to nothing",
			live: asServed(configMap(map[string]any{"mode": "fast"})),
			want: `--- live
+++ desired
@@ -1,7 +0,0 @@
-apiVersion: v1
-data:
-  mode: fast
-kind: ConfigMap
-metadata:
-  name: settings
-  namespace: payments
`,
		},
		{
			name:   "only server-owned fields differ",
			live:   live,
			dryRun: configMap(map[string]any{"mode": "fast", "size": "1"}),
			want:   "",
		},
		{
			name: "neither object",
			want: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, truncated, err := Diff(tt.live, tt.dryRun)
			if err != nil {
				t.Fatalf("Diff() error = %v", err)
			}
			if truncated {
				t.Errorf("Diff() truncated a short diff")
			}
			if got != tt.want {
				t.Errorf("Diff() =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestDiff_NeverShowsSecretValues(t *testing.T) {
	const other = "other-value-42"
	secrets := []string{password, b64(password), token, b64(token), other, b64(other)}
	withLastApplied := func(obj *unstructured.Unstructured) *unstructured.Unstructured {
		obj.SetAnnotations(map[string]string{redact.LastAppliedAnnotation: `{"stringData":{"token":"` + token + `"}}`})
		return obj
	}
	list := func(items ...*unstructured.Unstructured) *unstructured.Unstructured {
		raw := []any{}
		for _, item := range items {
			raw = append(raw, item.Object)
		}
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "List", "items": raw}}
	}
	tests := []struct {
		name         string
		live, dryRun *unstructured.Unstructured
		mentions     []string
	}{
		{
			name:     "changed data value",
			live:     asServed(secret(map[string]string{"password": password, "token": token}, nil)),
			dryRun:   asServed(secret(map[string]string{"password": other, "token": token}, nil)),
			mentions: []string{"-  password: '" + syncv1.RedactedOldMarker + "'", "+  password: '" + syncv1.RedactedNewMarker + "'", "   token: '" + syncv1.RedactedUnchangedMarker + "'"},
		},
		{
			name:     "created Secret with stringData",
			dryRun:   secret(nil, map[string]string{"token": token, "password": password}),
			mentions: []string{"+  token: '" + syncv1.RedactedMarker + "'"},
		},
		{
			name:     "deleted Secret",
			live:     asServed(secret(map[string]string{"password": password}, nil)),
			mentions: []string{"-  password: '" + syncv1.RedactedMarker + "'"},
		},
		{
			name:     "last-applied annotation of a Secret in a List",
			dryRun:   list(withLastApplied(secret(map[string]string{"password": password}, nil))),
			mentions: []string{redact.LastAppliedAnnotation + ": '" + syncv1.RedactedMarker + "'"},
		},
		{
			name:   "changed Secret in a List",
			live:   list(secret(map[string]string{"password": password}, nil)),
			dryRun: list(secret(map[string]string{"password": other}, map[string]string{"token": token})),
			// Items of Lists are not paired, so every value is the plain marker.
			mentions: []string{"+    token: '" + syncv1.RedactedMarker + "'"},
		},
		{
			name:     "Secret in a List",
			dryRun:   list(secret(map[string]string{"password": password}, map[string]string{"token": token})),
			mentions: []string{"+    password: '" + syncv1.RedactedMarker + "'", "+    token: '" + syncv1.RedactedMarker + "'"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := Diff(tt.live, tt.dryRun)
			if err != nil {
				t.Fatalf("Diff() error = %v", err)
			}
			for _, s := range secrets {
				if strings.Contains(got, s) {
					t.Errorf("Diff() shows secret %q:\n%s", s, got)
				}
			}
			for _, m := range tt.mentions {
				if !strings.Contains(got, m) {
					t.Errorf("Diff() does not show %q:\n%s", m, got)
				}
			}
		})
	}
}

func TestDiff_TruncatesOnALineBoundary(t *testing.T) {
	manyKeys := func(value string) *unstructured.Unstructured {
		data := map[string]any{}
		for i := 0; i < 200; i++ {
			data[fmt.Sprintf("key-%03d", i)] = value
		}
		return configMap(data)
	}
	tests := []struct {
		name         string
		live, dryRun *unstructured.Unstructured
	}{
		{"many changed lines", manyKeys("a"), manyKeys("b")},
		{"a changed line longer than the limit", configMap(map[string]any{"blob": "x"}),
			configMap(map[string]any{"blob": strings.Repeat("y", 3*syncv1.MaxDiffBytes)})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, truncated, err := Diff(tt.live, tt.dryRun)
			if err != nil {
				t.Fatalf("Diff() error = %v", err)
			}
			if !truncated {
				t.Errorf("Diff() truncated = false, want true")
			}
			if len(got) > syncv1.MaxDiffBytes {
				t.Errorf("Diff() is %d bytes, want at most %d", len(got), syncv1.MaxDiffBytes)
			}
			if !strings.HasPrefix(got, "--- live\n+++ desired\n") || !strings.HasSuffix(got, "\n") {
				t.Errorf("Diff() is not cut after a whole line:\n%s", got)
			}
			for _, line := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
				if strings.Contains(line, "blob: y") {
					t.Errorf("Diff() keeps part of the overlong line: %.40s...", line)
				}
			}
		})
	}
}

func TestDiff_UnencodableValueFailsNamingTheObject(t *testing.T) {
	_, _, err := Diff(nil, configMap(map[string]any{"ratio": math.Inf(1)}))
	if err == nil || !strings.Contains(err.Error(), "ConfigMap payments/settings") {
		t.Errorf("Diff() error = %v, want one naming ConfigMap payments/settings", err)
	}
}
