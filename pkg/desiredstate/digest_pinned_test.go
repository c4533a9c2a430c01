package desiredstate

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestEncode_DigestsArePinned: Revision names are derived from these
// digests, so the order and bytes Encode produces must never change. The
// inputs cover every part of the identity order: core and named groups, an
// apiVersion that does not parse, namespaced and cluster-scoped objects, and
// two objects of one identity.
func TestEncode_DigestsArePinned(t *testing.T) {
	obj := func(apiVersion, kind, namespace, name string, extra map[string]any) *unstructured.Unstructured {
		o := &unstructured.Unstructured{Object: map[string]any{}}
		for k, v := range extra {
			o.Object[k] = v
		}
		o.SetAPIVersion(apiVersion)
		o.SetKind(kind)
		o.SetName(name)
		if namespace != "" {
			o.SetNamespace(namespace)
		}
		return o
	}
	tests := []struct {
		name   string
		objs   []*unstructured.Unstructured
		digest string
		rev    string
	}{
		{
			name:   "empty",
			digest: "sha256:4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945",
			rev:    "shop-4f53cda18c",
		},
		{
			name: "groups, kinds, namespaces and names",
			objs: []*unstructured.Unstructured{
				obj("apps/v1", "Deployment", "shop", "web", nil),
				obj("v1", "ConfigMap", "shop", "settings", map[string]any{"data": map[string]any{"mode": "fast"}}),
				obj("v1", "Namespace", "", "shop", nil),
				obj("rbac.authorization.k8s.io/v1", "ClusterRole", "", "viewer", nil),
				obj("apps/v1", "Deployment", "other", "web", nil),
				obj("v1", "ConfigMap", "shop", "a-settings", nil),
				obj("batch/v1", "Job", "shop", "migrate", nil),
			},
			digest: "sha256:228e2c7ef179074b36d36e84f8f822dc4fc2a81119953adacf49183335c55878",
			rev:    "shop-228e2c7ef1",
		},
		{
			name: "an apiVersion that does not parse and one identity twice",
			objs: []*unstructured.Unstructured{
				obj("a/b/c", "Thing", "shop", "x", nil),
				obj("v1", "ConfigMap", "shop", "twice", map[string]any{"data": map[string]any{"n": "2"}}),
				obj("v1", "ConfigMap", "shop", "twice", map[string]any{"data": map[string]any{"n": "1"}}),
				obj("example.com/v1", "Widget", "", "w", nil),
			},
			digest: "sha256:08005e6b2ce77c57ba0987c7739f227c6325419d416a8abb136748e2fba6882e",
			rev:    "shop-08005e6b2c",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, digest, err := Encode(tt.objs)
			if err != nil {
				t.Fatalf("Encode() error = %v", err)
			}
			if digest != tt.digest {
				t.Errorf("Encode() digest = %s, want %s", digest, tt.digest)
			}
			if d, err := Digest(tt.objs); err != nil || d != tt.digest {
				t.Errorf("Digest() = %s, %v, want %s, the digest Encode gives", d, err, tt.digest)
			}
			if rev := RevisionName("shop", digest); rev != tt.rev {
				t.Errorf("RevisionName() = %s, want %s", rev, tt.rev)
			}
		})
	}
}
