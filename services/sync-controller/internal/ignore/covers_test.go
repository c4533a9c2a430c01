package ignore

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

func TestCovers_ResolvesListPositionsAgainstLiveState(t *testing.T) {
	live := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"replicas": int64(3),
			"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "sidecar", "image": "proxy:1"},
				map[string]any{"name": "web", "image": "web:2"},
			}}},
			"finalizers": []any{"a", "b"},
		},
	}}
	container := func(name string) fieldpath.PathElement {
		return fieldpath.PathElement{Key: &value.FieldList{{Name: "name", Value: value.NewValueInterface(name)}}}
	}
	image := func(name string) fieldpath.Path {
		return fieldpath.MakePathOrDie("spec", "template", "spec", "containers", container(name).Key, "image")
	}
	at := func(i int) *int { return &i }
	tests := []struct {
		name string
		path fieldpath.Path
		ptrs []Pointer
		want bool
	}{
		{"the field itself", fieldpath.MakePathOrDie("spec", "replicas"), []Pointer{{"spec", "replicas"}}, true},
		{"a field under it", fieldpath.MakePathOrDie("spec", "replicas"), []Pointer{{"spec"}}, true},
		{"a field above it", fieldpath.MakePathOrDie("spec"), []Pointer{{"spec", "replicas"}}, false},
		{"a sibling", fieldpath.MakePathOrDie("spec", "paused"), []Pointer{{"spec", "replicas"}}, false},
		{"a keyed item at the position", image("web"), []Pointer{{"spec", "template", "spec", "containers", "1", "image"}}, true},
		{"a keyed item elsewhere", image("sidecar"), []Pointer{{"spec", "template", "spec", "containers", "1", "image"}}, false},
		{"a set item by value", fieldpath.MakePathOrDie("spec", "finalizers", value.NewValueInterface("b")), []Pointer{{"spec", "finalizers", "1"}}, true},
		{"an item by index", fieldpath.Path{fieldpath.PathElement{FieldName: strp("spec")}, fieldpath.PathElement{FieldName: strp("finalizers")}, fieldpath.PathElement{Index: at(0)}}, []Pointer{{"spec", "finalizers", "0"}}, true},
		{"a position live does not have", image("web"), []Pointer{{"spec", "template", "spec", "containers", "2", "image"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Covers(tt.path, live, tt.ptrs); got != tt.want {
				t.Errorf("Covers(%s, %v) = %v, want %v", tt.path, tt.ptrs, got, tt.want)
			}
		})
	}
	if Covers(fieldpath.MakePathOrDie("spec", "replicas"), nil, []Pointer{{"spec", "replicas"}}) {
		t.Error("Covers with no live object = true, want false: nothing is owned yet")
	}
}

func strp(s string) *string { return &s }
