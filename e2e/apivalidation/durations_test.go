package apivalidation_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestAPI_DurationFields_RefuseHostileValues sends each duration field the
// values a typed client cannot: text that is not a Go duration would break
// every informer over the kind, and tiny or negative ones would poll hot or
// silently mean the default.
func TestAPI_DurationFields_RefuseHostileValues(t *testing.T) {
	ns := namespace(t)
	fields := []struct {
		kind  string
		field []string
		min   string
		obj   func(ns string) client.Object
	}{
		{"Repository", []string{"spec", "pollInterval"}, "must be at least 5s",
			func(ns string) client.Object { return validRepository(ns) }},
		{"ImagePolicy", []string{"spec", "interval"}, "must be at least 1m",
			func(ns string) client.Object { return validImagePolicy(ns) }},
	}
	values := []struct {
		value string
		msg   string // empty: accepted
	}{
		{"soon", "must be a duration such as 30s, 5m or 1h"},
		{"", "must be a duration such as 30s, 5m or 1h"},
		{"-5m", "must be a duration such as 30s, 5m or 1h"},
		{"5 minutes", "must be a duration such as 30s, 5m or 1h"},
		{"1ms", "min"},
		{"0s", "min"},
		{"1h30m", ""},
		{"2.5h", ""},
	}
	for _, f := range fields {
		for _, v := range values {
			t.Run(f.kind+" "+strings.Join(f.field, ".")+"="+v.value, func(t *testing.T) {
				u := unstructuredOf(t, f.obj(ns))
				u.SetName("")
				u.SetGenerateName("duration-")
				if err := unstructured.SetNestedField(u.Object, v.value, f.field...); err != nil {
					t.Fatal(err)
				}
				err := k8s.Create(t.Context(), u)
				want := v.msg
				if want == "min" {
					want = f.min
				}
				if want == "" {
					if err != nil {
						t.Fatalf("refused %q: %v", v.value, err)
					}
					return
				}
				if err == nil {
					t.Fatalf("accepted %s %q; want a refusal naming %s", strings.Join(f.field, "."), v.value, strings.Join(f.field, "."))
				}
				if !strings.Contains(err.Error(), strings.Join(f.field, ".")+":") || !strings.Contains(err.Error(), want) {
					t.Fatalf("refusal %q\ndoes not name field %s with %q", err, strings.Join(f.field, "."), want)
				}
			})
		}
	}
}

func unstructuredOf(t *testing.T, o client.Object) *unstructured.Unstructured {
	t.Helper()
	gvks, _, err := k8s.Scheme().ObjectKinds(o)
	if err != nil {
		t.Fatal(err)
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvks[0])
	return u
}
