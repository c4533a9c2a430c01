package planner

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/desiredstate"
)

// ObjectID identifies an object in the cluster.
type ObjectID = desiredstate.ObjectID

// IDOf identifies obj.
func IDOf(obj *unstructured.Unstructured) ObjectID { return desiredstate.IDOf(obj) }

// IDOfRef identifies the object ref names.
func IDOfRef(ref syncv1.ObjectRef) ObjectID {
	return ObjectID{Group: ref.Group, Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name}
}

// RefOf is obj's reference.
func RefOf(obj *unstructured.Unstructured) *syncv1.ObjectRef {
	gvk := obj.GroupVersionKind()
	return &syncv1.ObjectRef{Namespace: obj.GetNamespace(), Name: obj.GetName(), Group: gvk.Group, Kind: gvk.Kind, Version: gvk.Version}
}

// InventoryEntry is obj in the Inventory's compact form.
func InventoryEntry(obj *unstructured.Unstructured) string {
	return syncv1.InventoryEntry(*RefOf(obj))
}

// ParseInventoryEntry reverses InventoryEntry into an object carrying only
// its identity, ready for a Get or Delete.
func ParseInventoryEntry(entry string) (*unstructured.Unstructured, error) {
	ref, err := syncv1.ParseInventoryEntry(entry)
	if err != nil {
		return nil, err
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(schema.GroupVersionKind{Group: ref.Group, Version: ref.Version, Kind: ref.Kind})
	obj.SetNamespace(ref.Namespace)
	obj.SetName(ref.Name)
	return obj, nil
}
