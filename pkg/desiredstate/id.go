package desiredstate

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// ObjectID is what makes two objects the same object in a cluster; the
// version is only how it is served.
type ObjectID struct {
	Group, Kind, Namespace, Name string
}

// IDOf identifies obj.
func IDOf(obj *unstructured.Unstructured) ObjectID {
	gvk := obj.GroupVersionKind()
	return ObjectID{Group: gvk.Group, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// String names the object the way kubectl users read it:
// "Deployment.apps shop/web", "Namespace shop".
func (id ObjectID) String() string {
	kind := id.Kind
	if id.Group != "" {
		kind += "." + id.Group
	}
	if id.Namespace != "" {
		return kind + " " + id.Namespace + "/" + id.Name
	}
	return kind + " " + id.Name
}
