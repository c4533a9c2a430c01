package manager

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
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
		tomb := toolscache.DeletedFinalStateUnknown{Key: "ns/a"}
		out, err := TrimManagedFields(tomb)
		if err != nil || out != any(tomb) {
			t.Fatalf("got %v, %v; want the value unchanged", out, err)
		}
	})
}

func TestByObject_RunsTheKindsTransformAfterTrimmingManagedFields(t *testing.T) {
	var seen []metav1.ManagedFieldsEntry
	narrow := func(in any) (any, error) {
		cm := in.(*corev1.ConfigMap)
		seen = cm.ManagedFields
		cm.Data = nil
		return cm, nil
	}
	kinds := byObject(map[client.Object]cache.ByObject{
		&corev1.ConfigMap{}: {Transform: narrow},
		&corev1.Secret{}:    {},
	})
	var transform toolscache.TransformFunc
	for obj, by := range kinds {
		switch obj.(type) {
		case *corev1.ConfigMap:
			transform = by.Transform
		case *corev1.Secret:
			if by.Transform != nil {
				t.Error("a kind without a transform of its own got one; it must keep the default")
			}
		}
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "a", ManagedFields: []metav1.ManagedFieldsEntry{
			{Manager: "kuvryn-sync", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:data":{}}`)}}},
		Data: map[string]string{"k": "v"},
	}
	if _, err := transform(cm); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || seen[0].Manager != "kuvryn-sync" || seen[0].FieldsV1 != nil {
		t.Fatalf("the kind's transform saw managedFields %+v, want them trimmed first", seen)
	}
	if cm.Data != nil {
		t.Fatal("the kind's transform did not run")
	}
	if byObject(nil) != nil {
		t.Fatal("no kinds must leave the cache's ByObject unset")
	}
}
