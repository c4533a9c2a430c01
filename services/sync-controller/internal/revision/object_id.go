package revision

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/desiredstate"
)

// objectID identifies an object in the cluster.
type objectID = desiredstate.ObjectID

func idOf(obj *unstructured.Unstructured) objectID { return desiredstate.IDOf(obj) }

func idOfRef(ref syncv1.ObjectRef) objectID {
	return objectID{Group: ref.Group, Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name}
}

// inventoryEntry is obj in the Inventory's compact form.
func inventoryEntry(obj *unstructured.Unstructured) string {
	gvk := obj.GroupVersionKind()
	return syncv1.InventoryEntry(syncv1.ObjectRef{Namespace: obj.GetNamespace(), Name: obj.GetName(), Group: gvk.Group, Kind: gvk.Kind, Version: gvk.Version})
}

// parseInventoryEntry reverses inventoryEntry into an object carrying only
// its identity, ready for a Get or Delete.
func parseInventoryEntry(entry string) (*unstructured.Unstructured, error) {
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
