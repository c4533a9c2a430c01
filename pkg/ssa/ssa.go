// Package ssa writes Kuvryn Sync objects with Server-Side Apply, so that each
// controller owns exactly the fields it sets and managedFields shows who
// wrote what.
package ssa

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/message"
)

// ApplyStatus applies status as the whole status this field manager owns on
// obj: fields left out are released by the manager, fields other managers own
// are untouched. status is any value that marshals to the status object
// (typically a map or a small struct with omitempty fields). The manager
// forces ownership of what it writes, because each status field has exactly
// one writer (DESIGN.md section 2). obj takes the resourceVersion the write
// produced, so a caller can tell a copy holding its write from an older one.
func ApplyStatus(ctx context.Context, c client.Client, obj client.Object, manager string, status any) error {
	u, err := skeleton(c, obj)
	if err != nil {
		return err
	}
	m, err := statusMap(u, status)
	if err != nil {
		return err
	}
	u.Object["status"] = m
	if err := c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u),
		client.FieldOwner(manager), client.ForceOwnership); err != nil {
		return err
	}
	if rv := u.GetResourceVersion(); rv != "" {
		obj.SetResourceVersion(rv)
	}
	return nil
}

// MergeStatus writes status with a JSON merge patch of the status
// subresource from written, what manager wrote last (nil when unknown), to
// status: fields written holds and status drops are sent as null, unchanged
// fields are not sent, and when nothing changed nothing is sent. The API
// server takes it as an update, with no apply configuration to merge field
// by field (docs/benchmarks.md prices both). managedFields names manager
// (operation Update), and obj takes the resourceVersion the write produced,
// as with ApplyStatus. With written nil, every field of status is sent and
// none is released.
//
// There is no optimistic lock, so it is only for a status that one writer
// owns whole, such as a Revision's (only the sync-controller writes it). It
// must not write a status whose lists other writers share: a merge patch
// replaces a whole list, so writing an Application's conditions this way
// would delete the other controllers' conditions (Rendered,
// NotificationsReady). Use ApplyStatus there.
func MergeStatus(ctx context.Context, c client.Client, obj client.Object, manager string, written, status any) error {
	u, err := skeleton(c, obj)
	if err != nil {
		return err
	}
	from, err := withStatus(u, written)
	if err != nil {
		return err
	}
	to, err := withStatus(u, status)
	if err != nil {
		return err
	}
	patch, err := client.MergeFrom(from).Data(to)
	if err != nil {
		return fmt.Errorf("diffing status of %s %s: %w", u.GetKind(), client.ObjectKeyFromObject(obj), err)
	}
	if string(patch) == "{}" {
		return nil
	}
	if err := c.Status().Patch(ctx, u, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(manager)); err != nil {
		return err
	}
	obj.SetResourceVersion(u.GetResourceVersion())
	return nil
}

// withStatus is a copy of u holding status v, an empty one when v is nil:
// a null status in a merge patch would delete the whole status, other
// writers' fields included.
func withStatus(u *unstructured.Unstructured, v any) (*unstructured.Unstructured, error) {
	m, err := statusMap(u, v)
	if err != nil {
		return nil, err
	}
	if m == nil {
		m = map[string]any{}
	}
	w := u.DeepCopy()
	w.Object["status"] = m
	return w, nil
}

// statusMap is v, which marshals to the status object of u, as the map an
// unstructured object holds; nil when v marshals to null.
func statusMap(u *unstructured.Unstructured, v any) (map[string]any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding status of %s %s: %w", u.GetKind(), client.ObjectKeyFromObject(u), err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// skeleton is obj's identity: apiVersion, kind, namespace and name.
func skeleton(c client.Client, obj client.Object) (*unstructured.Unstructured, error) {
	gvk, err := c.GroupVersionKindFor(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(obj.GetNamespace())
	u.SetName(obj.GetName())
	return u, nil
}

// Conditions returns the conditions of the given types from existing, with
// update applied the way meta.SetStatusCondition does (LastTransitionTime
// kept while the status does not change). A manager applies the result so
// that it keeps owning only its own condition types.
func Conditions(existing []metav1.Condition, types []string, update ...metav1.Condition) []metav1.Condition {
	all := append([]metav1.Condition(nil), existing...)
	for _, c := range update {
		meta.SetStatusCondition(&all, c)
	}
	own := make([]metav1.Condition, 0, len(types))
	for _, t := range types {
		if c := meta.FindStatusCondition(all, t); c != nil {
			own = append(own, *c)
		}
	}
	return own
}

// Condition builds a condition whose message is bounded by
// syncv1.MaxMessageBytes, so status stays small whatever an error says.
func Condition(conditionType string, ok bool, reason, message string, generation int64) metav1.Condition {
	s := metav1.ConditionFalse
	if ok {
		s = metav1.ConditionTrue
	}
	return metav1.Condition{Type: conditionType, Status: s, Reason: reason,
		Message: Truncate(message), ObservedGeneration: generation}
}

// Truncate bounds a message for status or an Event.
func Truncate(s string) string {
	return message.Bound(s, syncv1.MaxMessageBytes)
}
