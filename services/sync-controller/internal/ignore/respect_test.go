package ignore

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestRespect_KeepsLiveValuesOfIgnoredFieldsItDeclares(t *testing.T) {
	desired := func() map[string]any {
		return map[string]any{
			"spec": map[string]any{
				"replicas": int64(1),
				"template": map[string]any{"spec": map[string]any{"containers": []any{
					map[string]any{"name": "web", "image": "web:1"},
				}}},
			},
		}
	}
	live := map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{"owner": "hpa"}},
		"spec": map[string]any{
			"replicas": int64(5),
			"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "web", "image": "web:2"},
			}}},
		},
	}
	tests := []struct {
		name string
		live map[string]any
		ptrs []Pointer
		want func(map[string]any)
	}{
		{"live value of a declared field", live, []Pointer{{"spec", "replicas"}}, func(o map[string]any) {
			o["spec"].(map[string]any)["replicas"] = int64(5)
		}},
		{"by list position", live, []Pointer{{"spec", "template", "spec", "containers", "0", "image"}}, func(o map[string]any) {
			o["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"] = "web:2"
		}},
		{"undeclared field stays undeclared", live, []Pointer{{"metadata", "annotations", "owner"}}, func(map[string]any) {}},
		{"declared field live lacks is left out", map[string]any{"spec": map[string]any{}}, []Pointer{{"spec", "replicas"}}, func(o map[string]any) {
			delete(o["spec"].(map[string]any), "replicas")
		}},
		{"a list item past the end", live, []Pointer{{"spec", "template", "spec", "containers", "3", "image"}}, func(map[string]any) {}},
		{"an index that is not a number", live, []Pointer{{"spec", "template", "spec", "containers", "web"}}, func(map[string]any) {}},
		{"no live object: created as desired", nil, []Pointer{{"spec", "replicas"}}, func(map[string]any) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := &unstructured.Unstructured{Object: desired()}
			var l *unstructured.Unstructured
			if tt.live != nil {
				l = &unstructured.Unstructured{Object: tt.live}
			}
			got := Respect(in, l, tt.ptrs)
			want := desired()
			tt.want(want)
			if !reflect.DeepEqual(got.Object, want) {
				t.Errorf("Respect = %v\nwant       %v", got.Object, want)
			}
			if !reflect.DeepEqual(in.Object, desired()) {
				t.Errorf("Respect changed its input: %v", in.Object)
			}
		})
	}
}
