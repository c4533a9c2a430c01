package validation

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

func TestError_NamesTheObjectTheAnnotationAndTheProblem(t *testing.T) {
	obj := func(kind, namespace, name string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{}
		o.SetAPIVersion("v1")
		o.SetKind(kind)
		o.SetNamespace(namespace)
		o.SetName(name)
		return o
	}
	tests := []struct {
		name string
		err  *Error
		want string
	}{
		{"namespaced object", &Error{Object: Describe(obj("ConfigMap", "shop", "a")), Problem: "appears more than once in the desired state"},
			"ConfigMap shop/a: appears more than once in the desired state"},
		{"cluster-scoped object", &Error{Object: Describe(obj("Namespace", "", "shop")), Problem: "broken"}, "Namespace shop: broken"},
		{"annotation", &Error{Object: "Job shop/migrate", Annotation: syncv1.HookAnnotation, Value: "pre-synk", Problem: "unknown value"},
			`Job shop/migrate: annotation ` + syncv1.HookAnnotation + `="pre-synk": unknown value`},
		{"huge value bounded", &Error{Object: "Job shop/x", Annotation: "a", Value: strings.Repeat("v", 1000), Problem: "p"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.err.Error()
			if tt.want != "" && got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
			if len(got) > 200 {
				t.Errorf("Error() is %d bytes, want the value bounded to %d", len(got), MaxValueBytes)
			}
			if tt.err.Reason() != syncv1.ReasonValidationFailure {
				t.Errorf("Reason() = %q, want %q", tt.err.Reason(), syncv1.ReasonValidationFailure)
			}
		})
	}
}
