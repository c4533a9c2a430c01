package controller_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// storeUndecodableRepository stores a Repository whose pollInterval is not
// a duration, as one created before the API server refused such values:
// it lifts the pollInterval rules from the CRD for the time of the create.
func storeUndecodableRepository(t *testing.T, ns, name, pollInterval string) {
	t.Helper()
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
	if err := k8s.Get(t.Context(), client.ObjectKey{Name: "repositories." + syncv1.GroupVersion.Group}, crd); err != nil {
		t.Fatal(err)
	}
	original := crd.DeepCopy()
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		unstructured.RemoveNestedField(v.(map[string]any),
			"schema", "openAPIV3Schema", "properties", "spec", "properties", "pollInterval", "x-kubernetes-validations")
	}
	if err := unstructured.SetNestedSlice(crd.Object, versions, "spec", "versions"); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Update(t.Context(), crd); err != nil {
		t.Fatal(err)
	}
	defer func() {
		current := original.DeepCopy()
		if err := k8s.Get(t.Context(), client.ObjectKeyFromObject(crd), current); err != nil {
			t.Fatal(err)
		}
		original.SetResourceVersion(current.GetResourceVersion())
		if err := k8s.Update(t.Context(), original); err != nil {
			t.Fatalf("restoring the Repository CRD: %v", err)
		}
	}()
	bad := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"git":          map[string]any{"url": "https://git.example.com/unused.git"},
			"pollInterval": pollInterval,
		},
	}}
	bad.SetGroupVersionKind(syncv1.GroupVersion.WithKind("Repository"))
	bad.SetNamespace(ns)
	bad.SetName(name)
	// The API server applies a CRD update asynchronously.
	var err error
	eventually(t, "the API server to store pollInterval "+pollInterval, func() bool {
		err = k8s.Create(t.Context(), bad.DeepCopy())
		return err == nil
	})
	t.Cleanup(func() { _ = k8s.Delete(t.Context(), bad) })
}

// TestRepository_UndecodableSpec_DoesNotBlindTheController stores
// Repositories whose pollInterval is not a duration: each says so in
// Ready, naming the field, and every other Repository is still fetched.
func TestRepository_UndecodableSpec_DoesNotBlindTheController(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, pollInterval string
	}{
		{"text", "soon"},
		{"a negative number of hours written out", "-five hours"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			badNS := newNamespace(t)
			storeUndecodableRepository(t, badNS, "broken", tc.pollInterval)

			ns := newNamespace(t)
			gitRepo, _ := newRepository(t, ns, "platform", map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"})
			head, err := gitRepo.Head("main")
			if err != nil {
				t.Fatal(err)
			}
			eventually(t, "a Repository beside the broken one to fetch", func() bool {
				r := get(t, &syncv1.Repository{}, ns, "platform")
				return r.Status.Artifact != nil && r.Status.Artifact.Commit == head &&
					meta.IsStatusConditionTrue(r.Status.Conditions, syncv1.ConditionReady)
			})

			var ready *metav1.Condition
			eventually(t, "the broken Repository to report its spec", func() bool {
				u := &unstructured.Unstructured{}
				u.SetGroupVersionKind(syncv1.GroupVersion.WithKind("Repository"))
				if err := k8s.Get(t.Context(), client.ObjectKey{Namespace: badNS, Name: "broken"}, u); err != nil {
					t.Fatal(err)
				}
				conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
				for _, c := range conditions {
					m := c.(map[string]any)
					if m["type"] == syncv1.ConditionReady {
						ready = &metav1.Condition{Status: metav1.ConditionStatus(m["status"].(string)),
							Reason: m["reason"].(string), Message: m["message"].(string)}
					}
				}
				return ready != nil
			})
			if ready.Status != metav1.ConditionFalse || ready.Reason != syncv1.ReasonValidationFailure ||
				!strings.Contains(ready.Message, "spec.pollInterval") || !strings.Contains(ready.Message, tc.pollInterval) {
				t.Fatalf("broken Repository Ready = %+v, want False, ValidationFailure, naming spec.pollInterval and %q", ready, tc.pollInterval)
			}
		})
	}
}
