package setters

import "testing"

func TestParseImage_SplitsNameTagAndDigest(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Image
		ok   bool
	}{
		{"ghcr.io/acme/api:1.0.0@sha256:abc", Image{"ghcr.io/acme/api", "1.0.0", "sha256:abc"}, true},
		{"127.0.0.1:5000/web:v2", Image{"127.0.0.1:5000/web", "v2", ""}, true},
		{"127.0.0.1:5000/web", Image{}, false},
		{"web:", Image{}, false},
		{":tag", Image{}, false},
	} {
		got, ok := ParseImage(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseImage(%q) = %+v, %v; want %+v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
		if ok && got.String() != tc.in {
			t.Errorf("ParseImage(%q).String() = %q", tc.in, got.String())
		}
	}
}
