package plan

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"math"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/redact"
)

const (
	password = "correct-horse-battery-staple"
	token    = "tok-9f8e7d6c5b4a"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func configMap(data map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata":   map[string]any{"name": "settings", "namespace": "payments"},
		"data":       data,
	}}
}

func secret(data, stringData map[string]string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "Secret",
		"metadata":   map[string]any{"name": "db", "namespace": "payments"},
		"type":       "Opaque",
	}}
	if data != nil {
		m := map[string]any{}
		for k, v := range data {
			m[k] = b64(v)
		}
		obj.Object["data"] = m
	}
	if stringData != nil {
		m := map[string]any{}
		for k, v := range stringData {
			m[k] = v
		}
		obj.Object["stringData"] = m
	}
	return obj
}

// asServed adds what the API server writes to obj.
func asServed(obj *unstructured.Unstructured) *unstructured.Unstructured {
	out := obj.DeepCopy()
	metadata := out.Object["metadata"].(map[string]any)
	metadata["managedFields"] = []any{map[string]any{"manager": "kuvryn-sync", "operation": "Apply"}}
	metadata["resourceVersion"] = "4711"
	metadata["uid"] = "0b6f6a9e-1c5e-4d1f-9a51-3c1d2f1e0a77"
	metadata["generation"] = int64(3)
	metadata["creationTimestamp"] = "2026-01-02T03:04:05Z"
	metadata["selfLink"] = "/api/v1/namespaces/payments/configmaps/settings"
	metadata["annotations"] = map[string]any{redact.LastAppliedAnnotation: `{"kind":"ConfigMap"}`}
	out.Object["status"] = map[string]any{"phase": "Active"}
	return out
}

func TestNormalize_StripsServerOwnedFields(t *testing.T) {
	plain := configMap(map[string]any{"mode": "fast"})
	withAnnotation := configMap(map[string]any{"mode": "fast"})
	withAnnotation.SetAnnotations(map[string]string{"example.com/team": "payments"})
	servedWithAnnotation := asServed(withAnnotation)
	servedWithAnnotation.Object["metadata"].(map[string]any)["annotations"].(map[string]any)["example.com/team"] = "payments"
	tests := []struct {
		name string
		in   *unstructured.Unstructured
		want *unstructured.Unstructured
	}{
		{"every server-owned field and the last-applied annotation", asServed(plain), plain},
		{"other annotations are kept", servedWithAnnotation, withAnnotation},
		{"object without metadata", &unstructured.Unstructured{Object: map[string]any{"kind": "Odd", "status": "x"}},
			&unstructured.Unstructured{Object: map[string]any{"kind": "Odd"}}},
		{"nil", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before *unstructured.Unstructured
			if tt.in != nil {
				before = tt.in.DeepCopy()
			}
			got := Normalize(tt.in)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Normalize() = %v, want %v", got, tt.want)
			}
			if !reflect.DeepEqual(tt.in, before) {
				t.Errorf("Normalize() modified its input")
			}
		})
	}
}

func TestHash_IsCanonicalSHA256OfNormalisedJSON(t *testing.T) {
	obj := asServed(configMap(map[string]any{"b": "2", "a": "1"}))
	// Map keys sorted, server-owned fields gone.
	canonical := `{"apiVersion":"v1","data":{"a":"1","b":"2"},"kind":"ConfigMap","metadata":{"name":"settings","namespace":"payments"}}`
	got, err := Hash(obj)
	if err != nil {
		t.Fatalf("Hash() error = %v", err)
	}
	if want := sha(canonical); got != want {
		t.Errorf("Hash() = %s, want sha256 of %s = %s", got, canonical, want)
	}
}

func TestHash_SecretValuesEnterOnlyAsHashes(t *testing.T) {
	inList := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "List",
		"items":      []any{secret(nil, map[string]string{"token": token}).Object},
	}}
	tests := []struct {
		name      string
		obj       *unstructured.Unstructured
		canonical string
	}{
		{
			name: "data and stringData of a Secret",
			obj:  secret(map[string]string{"password": password}, map[string]string{"token": token}),
			canonical: `{"apiVersion":"v1","data":{"password":"sha256:` + sha(b64(password)) + `"},` +
				`"kind":"Secret","metadata":{"name":"db","namespace":"payments"},` +
				`"stringData":{"token":"sha256:` + sha(token) + `"},"type":"Opaque"}`,
		},
		{
			name: "a malformed data field, hashed whole as JSON",
			obj: &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1", "kind": "Secret", "data": []any{password},
			}},
			canonical: `{"apiVersion":"v1","data":"sha256:` + sha(`["`+password+`"]`) + `","kind":"Secret"}`,
		},
		{
			name: "a Secret inside a List",
			obj:  inList,
			canonical: `{"apiVersion":"v1","items":[{"apiVersion":"v1","kind":"Secret",` +
				`"metadata":{"name":"db","namespace":"payments"},` +
				`"stringData":{"token":"sha256:` + sha(token) + `"},"type":"Opaque"}],"kind":"List"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Hash(tt.obj)
			if err != nil {
				t.Fatalf("Hash() error = %v", err)
			}
			if want := sha(tt.canonical); got != want {
				t.Errorf("Hash() = %s, want sha256 of %s = %s", got, tt.canonical, want)
			}
		})
	}
}

func TestHash_FollowsContentNotServerFields(t *testing.T) {
	base := configMap(map[string]any{"mode": "fast"})
	baseSecret := secret(map[string]string{"password": password}, map[string]string{"token": token})
	tests := []struct {
		name  string
		a, b  *unstructured.Unstructured
		equal bool
	}{
		{"server-owned fields do not count", base, asServed(base), true},
		{"key order does not count", configMap(map[string]any{"a": "1", "b": "2"}), configMap(map[string]any{"b": "2", "a": "1"}), true},
		{"a changed value counts", base, configMap(map[string]any{"mode": "slow"}), false},
		{"a changed Secret data value counts", baseSecret,
			secret(map[string]string{"password": "other"}, map[string]string{"token": token}), false},
		{"a changed Secret stringData value counts", baseSecret,
			secret(map[string]string{"password": password}, map[string]string{"token": "other"}), false},
		{"a value moved between Secret keys counts", secret(map[string]string{"a": password, "b": token}, nil),
			secret(map[string]string{"a": token, "b": password}, nil), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ha, errA := Hash(tt.a)
			hb, errB := Hash(tt.b)
			if errA != nil || errB != nil {
				t.Fatalf("Hash() errors = %v, %v", errA, errB)
			}
			if (ha == hb) != tt.equal {
				t.Errorf("Hash() equal = %v, want %v (%s, %s)", ha == hb, tt.equal, ha, hb)
			}
		})
	}
}

func TestHash_NilObjectHashesToEmpty(t *testing.T) {
	got, err := Hash(nil)
	if err != nil || got != "" {
		t.Errorf("Hash(nil) = %q, %v; want \"\", nil", got, err)
	}
}

func TestHash_UnencodableValueFailsNamingTheObject(t *testing.T) {
	_, err := Hash(configMap(map[string]any{"ratio": math.NaN()}))
	if err == nil || !strings.Contains(err.Error(), "ConfigMap payments/settings") {
		t.Errorf("Hash() error = %v, want one naming ConfigMap payments/settings", err)
	}
}
