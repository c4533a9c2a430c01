package manager

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TrimManagedFields is the cache transform of every service: it keeps who
// wrote an object (each managedFields entry's manager, operation,
// subresource and time), which the drift watches compare to tell the
// sync-controller's own applies from other writers, and drops the field
// sets themselves. Readers that need field sets (taking back hand edits)
// read the live object; in the cache they were most of an object's size
// (docs/benchmarks.md).
func TrimManagedFields(in any) (any, error) {
	obj, ok := in.(metav1.Object)
	if !ok {
		return in, nil
	}
	entries := obj.GetManagedFields()
	if len(entries) == 0 {
		return in, nil
	}
	trimmed := make([]metav1.ManagedFieldsEntry, len(entries))
	for i, e := range entries {
		trimmed[i] = metav1.ManagedFieldsEntry{
			Manager:     e.Manager,
			Operation:   e.Operation,
			APIVersion:  e.APIVersion,
			Time:        e.Time,
			Subresource: e.Subresource,
		}
	}
	obj.SetManagedFields(trimmed)
	return in, nil
}
