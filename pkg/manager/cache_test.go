package manager

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

func TestTrimManagedFields_KeepsWritersButNotTheirFieldSets(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 12, 4, 6, 0, 0, 0, time.UTC))
	entries := []metav1.ManagedFieldsEntry{
		{Manager: "kuvryn-sync", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1", Time: &at,
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:data":{"f:a":{}}}`)},
		{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &at,
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:data":{"f:b":{}}}`)},
		{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1",
			Time: &at, Subresource: "status", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:status":{}}`)},
	}
	want := []metav1.ManagedFieldsEntry{
		{Manager: "kuvryn-sync", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1", Time: &at},
		{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &at},
		{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1", Time: &at, Subresource: "status"},
	}
	typed := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", ManagedFields: entries}}
	partial := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "a", ManagedFields: entries}}
	u := &unstructured.Unstructured{}
	u.SetName("a")
	u.SetManagedFields(entries)

	for _, tc := range []struct {
		name string
		obj  metav1.Object
	}{
		{"typed", typed},
		{"metadata only", partial},
		{"unstructured", u},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := TrimManagedFields(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			got := out.(metav1.Object).GetManagedFields()
			if !equality.Semantic.DeepEqual(got, want) {
				t.Fatalf("managedFields after the transform:\n%+v\nwant\n%+v", got, want)
			}
			if tc.obj.GetName() != "a" {
				t.Fatalf("the transform changed the name to %q", tc.obj.GetName())
			}
		})
	}

	t.Run("no managedFields", func(t *testing.T) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}
		out, err := TrimManagedFields(cm)
		if err != nil || out != runtime.Object(cm) || cm.ManagedFields != nil {
			t.Fatalf("got %v, %v; want the object unchanged", out, err)
		}
	})
	t.Run("not an object", func(t *testing.T) {
		tomb := cache.DeletedFinalStateUnknown{Key: "ns/a"}
		out, err := TrimManagedFields(tomb)
		if err != nil || out != any(tomb) {
			t.Fatalf("got %v, %v; want the value unchanged", out, err)
		}
	})
}
