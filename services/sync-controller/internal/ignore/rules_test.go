package ignore

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

func deployment(namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment"}}
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

func TestFor_MatchesByGroupKindAndOptionallyNameAndNamespace(t *testing.T) {
	replicas := []string{"/spec/replicas"}
	tests := []struct {
		name  string
		rules []syncv1.IgnoreRule
		want  []Pointer
	}{
		{"group and kind", []syncv1.IgnoreRule{{Group: "apps", Kind: "Deployment", JSONPointers: replicas}}, []Pointer{{"spec", "replicas"}}},
		{"name and namespace", []syncv1.IgnoreRule{{Group: "apps", Kind: "Deployment", Name: "web", Namespace: "shop", JSONPointers: replicas}}, []Pointer{{"spec", "replicas"}}},
		{"another name", []syncv1.IgnoreRule{{Group: "apps", Kind: "Deployment", Name: "api", JSONPointers: replicas}}, nil},
		{"another namespace", []syncv1.IgnoreRule{{Group: "apps", Kind: "Deployment", Namespace: "bank", JSONPointers: replicas}}, nil},
		{"the core group is not apps", []syncv1.IgnoreRule{{Kind: "Deployment", JSONPointers: replicas}}, nil},
		{"another kind", []syncv1.IgnoreRule{{Group: "apps", Kind: "StatefulSet", JSONPointers: replicas}}, nil},
		{"every matching rule, in order", []syncv1.IgnoreRule{
			{Group: "apps", Kind: "Deployment", JSONPointers: replicas},
			{Group: "apps", Kind: "Deployment", Name: "web", JSONPointers: []string{"/metadata/annotations/a"}},
		}, []Pointer{{"spec", "replicas"}, {"metadata", "annotations", "a"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := For(tt.rules, deployment("shop", "web"))
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("For = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestFor_NamesTheRuleAndPointerItCannotRead(t *testing.T) {
	rules := []syncv1.IgnoreRule{
		{Kind: "ConfigMap", JSONPointers: []string{"/data/a"}},
		{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/spec/replicas", "/metadata/name"}},
	}
	_, err := For(rules, deployment("shop", "web"))
	if err == nil || !strings.Contains(err.Error(), "spec.ignoreDifferences[1].jsonPointers[1]") || !strings.Contains(err.Error(), `"/metadata/name"`) {
		t.Fatalf("For = %v, want an error naming spec.ignoreDifferences[1].jsonPointers[1] and the pointer", err)
	}
}
