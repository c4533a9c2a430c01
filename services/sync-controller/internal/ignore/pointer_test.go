package ignore

import (
	"reflect"
	"strings"
	"testing"
)

func TestParsePointer(t *testing.T) {
	tests := []struct {
		in      string
		want    Pointer
		wantErr string
	}{
		{in: "/spec/replicas", want: Pointer{"spec", "replicas"}},
		{in: "/metadata/annotations/example.com~1owner", want: Pointer{"metadata", "annotations", "example.com/owner"}},
		{in: "/data/a~0b", want: Pointer{"data", "a~b"}},
		{in: "/data/~01", want: Pointer{"data", "~1"}},
		{in: "/", want: Pointer{""}},
		{in: "/spec/template/spec/containers/0/image", want: Pointer{"spec", "template", "spec", "containers", "0", "image"}},
		{in: "spec/replicas", wantErr: "does not start with /"},
		{in: "", wantErr: "does not start with /"},
		{in: "/data/a~2", wantErr: "~ must be followed by 0 or 1"},
		{in: "/data/a~", wantErr: "~ must be followed by 0 or 1"},
		{in: "/metadata/name", wantErr: "identity"},
		{in: "/kind", wantErr: "identity"},
		{in: "/metadata", wantErr: "identity"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParsePointer(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParsePointer(%q) = %v, %v; want an error containing %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ParsePointer(%q) = %#v, %v; want %#v", tt.in, got, err, tt.want)
			}
			if got.String() != tt.in {
				t.Errorf("String() = %q, want the pointer it was parsed from, %q", got.String(), tt.in)
			}
		})
	}
}

// FuzzParsePointer: a pointer from an Application never panics the parser,
// and one it accepts prints back as itself.
func FuzzParsePointer(f *testing.F) {
	for _, s := range []string{"/spec/replicas", "/a~1b/~0", "/", "//", "/metadata/name", "x", "/~", "/~2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePointer(s)
		if err != nil {
			return
		}
		if p.String() != s {
			t.Fatalf("ParsePointer(%q).String() = %q", s, p.String())
		}
	})
}
