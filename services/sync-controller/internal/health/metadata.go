package health

import (
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// statusless are the kinds whose health is their existence: kstatus calls
// them Current unless they are being deleted, as nothing in them reports
// progress.
var statusless = map[schema.GroupKind]bool{
	{Kind: "ConfigMap"}:                                   true,
	{Kind: "Secret"}:                                      true,
	{Kind: "ServiceAccount"}:                              true,
	{Group: rbacv1.GroupName, Kind: "Role"}:               true,
	{Group: rbacv1.GroupName, Kind: "RoleBinding"}:        true,
	{Group: rbacv1.GroupName, Kind: "ClusterRole"}:        true,
	{Group: rbacv1.GroupName, Kind: "ClusterRoleBinding"}: true,
}

// serviceKind is the Service kind, healthy from its metadata unless it is
// a LoadBalancer, whose health is an address assigned.
var serviceKind = schema.GroupKind{Kind: "Service"}

// FromMetadata reports whether the health of desired, an object as the
// manifests want it, follows from its live metadata alone: a statusless
// kind, or a Service the manifests do not make a LoadBalancer, which
// kstatus calls Current as soon as it exists.
func FromMetadata(desired *unstructured.Unstructured) bool {
	gk := desired.GroupVersionKind().GroupKind()
	if gk == serviceKind {
		t, _, _ := unstructured.NestedString(desired.Object, "spec", "type")
		return t != string(corev1.ServiceTypeLoadBalancer)
	}
	return statusless[gk]
}
