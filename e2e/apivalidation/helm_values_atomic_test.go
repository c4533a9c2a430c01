package apivalidation_test

import (
	"encoding/json"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// Helm values are one field to Server-Side Apply: the managed fields of an
// Application whose values are nested deep name spec...values and nothing
// under it, so the API server never walks every leaf on each write (values
// nested 5000 deep made every status write of the Application time out).
// Values that are not an object are refused by name.
func TestAPI_HelmValuesAreOneAtomicField(t *testing.T) {
	ns := namespace(t)
	app := validApplication(ns)
	app.Spec.Source.Render.Helm.Values = &apiextensionsv1.JSON{Raw: []byte(strings.Repeat(`{"a":`, 200) + `"deep"` + strings.Repeat("}", 200))}
	obj, err := toUnstructured(app)
	if err != nil {
		t.Fatal(err)
	}
	if err := k8s.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner("kuvryn-test"), client.ForceOwnership); err != nil {
		t.Fatal(err)
	}
	applied := &syncv1.Application{}
	if err := k8s.Get(t.Context(), client.ObjectKeyFromObject(app), applied); err != nil {
		t.Fatal(err)
	}
	var fields string
	for _, m := range applied.ManagedFields {
		if m.Manager == "kuvryn-test" && m.FieldsV1 != nil {
			fields = m.FieldsV1.GetRawString()
		}
	}
	if !strings.Contains(fields, `"f:values":{}`) {
		t.Fatalf("managed fields of kuvryn-test do not hold spec.source.render.helm.values as one field: %s", fields)
	}
	if strings.Contains(fields, `"f:a"`) {
		t.Fatalf("managed fields of kuvryn-test name the leaves of the values: %.300s", fields)
	}

	refused := validApplication(ns)
	refused.Name = "list-values"
	refused.Spec.Source.Render.Helm.Values = &apiextensionsv1.JSON{Raw: []byte(`["replicaCount", 3]`)}
	err = k8s.Create(t.Context(), refused, &client.CreateOptions{DryRun: []string{"All"}})
	if err == nil || !strings.Contains(err.Error(), "spec.source.render.helm.values") {
		t.Fatalf("values that are a list: %v, want a refusal naming spec.source.render.helm.values", err)
	}
}

// toUnstructured is app as Server-Side Apply sends it.
func toUnstructured(app *syncv1.Application) (*unstructured.Unstructured, error) {
	app = app.DeepCopy()
	app.APIVersion, app.Kind = syncv1.GroupVersion.String(), "Application"
	raw, err := json.Marshal(app)
	if err != nil {
		return nil, err
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(raw); err != nil {
		return nil, err
	}
	unstructured.RemoveNestedField(obj.Object, "status")
	unstructured.RemoveNestedField(obj.Object, "metadata", "creationTimestamp")
	return obj, nil
}
