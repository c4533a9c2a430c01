package desiredstate

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestObjectID_NamesTheObjectAsKubectlUsersReadIt(t *testing.T) {
	for _, tc := range []struct {
		apiVersion, kind, namespace, name, want string
	}{
		{"apps/v1", "Deployment", "shop", "web", "Deployment.apps shop/web"},
		{"v1", "ConfigMap", "shop", "settings", "ConfigMap shop/settings"},
		{"v1", "Namespace", "", "shop", "Namespace shop"},
		{"rbac.authorization.k8s.io/v1", "ClusterRole", "", "viewer", "ClusterRole.rbac.authorization.k8s.io viewer"},
		{"a/b/c", "Thing", "shop", "x", "Thing.a/b/c shop/x"},
	} {
		obj := &unstructured.Unstructured{}
		obj.SetAPIVersion(tc.apiVersion)
		obj.SetKind(tc.kind)
		obj.SetNamespace(tc.namespace)
		obj.SetName(tc.name)
		if got := IDOf(obj).String(); got != tc.want {
			t.Errorf("IDOf(%s %s).String() = %q, want %q", tc.kind, tc.name, got, tc.want)
		}
	}
}
