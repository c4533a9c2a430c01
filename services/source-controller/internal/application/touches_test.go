package application

import "testing"

func TestTouches_AnApplicationIsChangedByFilesAtOrUnderItsPath(t *testing.T) {
	changed := []string{"apps/a-b/cm.yaml", "apps/a/deploy.yaml", "apps/c", "base/kustomization.yaml"}
	for _, tc := range []struct {
		path string
		want bool
	}{
		{path: "apps/a", want: true},
		{path: "apps/a/", want: true},
		{path: "./apps/a", want: true},
		{path: "apps/a-b", want: true},
		{path: "apps/c", want: true},
		{path: "apps/b", want: false},
		{path: "apps/a/deploy", want: false},
		{path: "app", want: false},
		{path: "apps/c/sub", want: false},
		{path: "base", want: true},
		{path: "", want: true},
		{path: ".", want: true},
	} {
		if got := Touches(changed, tc.path); got != tc.want {
			t.Errorf("Touches(%q, %q) = %v, want %v", changed, tc.path, got, tc.want)
		}
	}
	if Touches(nil, "") {
		t.Error("a commit that changes no file touches the root Application")
	}
}
