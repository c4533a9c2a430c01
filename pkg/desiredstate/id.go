package desiredstate

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ObjectID is what makes two objects the same object in a cluster; the
// version is only how it is served.
type ObjectID struct {
	Group, Kind, Namespace, Name string
}

// IDOf identifies obj. An apiVersion that does not parse stands for the
// group, so that even an invalid object has a stable identity and place in
// the order.
func IDOf(obj *unstructured.Unstructured) ObjectID {
	return ObjectID{Group: groupOf(obj.GetAPIVersion()), Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

func groupOf(apiVersion string) string {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return apiVersion
	}
	return gv.Group
}

// Less orders identities by group, kind, namespace and name: the order of
// Encode, on which digests and so Revision names depend.
func (id ObjectID) Less(other ObjectID) bool {
	if id.Group != other.Group {
		return id.Group < other.Group
	}
	if id.Kind != other.Kind {
		return id.Kind < other.Kind
	}
	if id.Namespace != other.Namespace {
		return id.Namespace < other.Namespace
	}
	return id.Name < other.Name
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
