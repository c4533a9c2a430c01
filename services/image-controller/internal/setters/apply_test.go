package setters

import (
	"testing"
)

var selected = map[string]Image{
	"api": {Name: "ghcr.io/acme/api", Tag: "1.2.0", Digest: "sha256:" + sixtyFour("a")},
	"web": {Name: "registry.local:5000/web", Tag: "v2", Digest: "sha256:" + sixtyFour("b")},
}

func sixtyFour(c string) string {
	s := ""
	for range 64 {
		s += c
	}
	return s
}

func TestApply_ReplacesOnlyMarkedValues(t *testing.T) {
	apiFull := "ghcr.io/acme/api:1.2.0@sha256:" + sixtyFour("a")
	for _, tc := range []applyCase{
		{
			name: "full, tag and name forms keep comments and spacing",
			in: "# deployment of the api\n" +
				"spec:\n" +
				"  containers:\n" +
				"    - name: api   # the container\n" +
				"      image: ghcr.io/acme/api:1.0.0 # {\"$imagepolicy\": \"payments:api\"}\n" +
				"  values:\n" +
				"    tag:   \"1.0.0\"   # {\"$imagepolicy\": \"payments:api:tag\"}\n" +
				"    repo: 'ghcr.io/old/api'\t# {\"$imagepolicy\":\"payments:api:name\"}\n" +
				"    other: 1.0.0 # unrelated\n",
			want: "# deployment of the api\n" +
				"spec:\n" +
				"  containers:\n" +
				"    - name: api   # the container\n" +
				"      image: " + apiFull + " # {\"$imagepolicy\": \"payments:api\"}\n" +
				"  values:\n" +
				"    tag:   \"1.2.0\"   # {\"$imagepolicy\": \"payments:api:tag\"}\n" +
				"    repo: 'ghcr.io/acme/api'\t# {\"$imagepolicy\":\"payments:api:name\"}\n" +
				"    other: 1.0.0 # unrelated\n",
			changed: 3,
		},
		{
			name:    "sequence item and CRLF line endings",
			in:      "images:\r\n- registry.local:5000/web:v1 # {\"$imagepolicy\": \"payments:web\"}\r\n- keep:me\r\n",
			want:    "images:\r\n- registry.local:5000/web:v2@sha256:" + sixtyFour("b") + " # {\"$imagepolicy\": \"payments:web\"}\r\n- keep:me\r\n",
			changed: 1,
		},
		{
			name:    "other namespace refused, four parts and unknown third part left alone",
			in:      "a: x:1 # {\"$imagepolicy\": \"other:api\"}\nb: x:1 # {\"$imagepolicy\": \"payments:api:tag:extra\"}\nc: x:1 # {\"$imagepolicy\": \"payments:api:version\"}\n",
			want:    "a: x:1 # {\"$imagepolicy\": \"other:api\"}\nb: x:1 # {\"$imagepolicy\": \"payments:api:tag:extra\"}\nc: x:1 # {\"$imagepolicy\": \"payments:api:version\"}\n",
			refused: []int{1},
		},
		{
			name:       "unknown policy left alone and reported",
			in:         "image: x:1 # {\"$imagepolicy\": \"payments:gone\"}\n",
			want:       "image: x:1 # {\"$imagepolicy\": \"payments:gone\"}\n",
			unresolved: []int{1},
		},
		{
			name: "markers inside block scalars are text",
			in: "data:\n  config.yaml: |\n    image: x:1 # {\"$imagepolicy\": \"payments:api\"}\n\n    more: text\n" +
				"image: x:1 # {\"$imagepolicy\": \"payments:api:tag\"}\n",
			want: "data:\n  config.yaml: |\n    image: x:1 # {\"$imagepolicy\": \"payments:api\"}\n\n    more: text\n" +
				"image: 1.2.0 # {\"$imagepolicy\": \"payments:api:tag\"}\n",
			changed: 1,
		},
		{
			name: "marker inside a quoted value or without a space before # is not a comment",
			in:   "a: \"x:1 # {\\\"$imagepolicy\\\": \\\"payments:api\\\"}\"\nb: x:1#{\"$imagepolicy\": \"payments:api\"}\n",
			want: "a: \"x:1 # {\\\"$imagepolicy\\\": \\\"payments:api\\\"}\"\nb: x:1#{\"$imagepolicy\": \"payments:api\"}\n",
		},
		{
			name:    "already selected value is no change; no trailing newline kept",
			in:      "image: " + apiFull + " # {\"$imagepolicy\": \"payments:api\"}\ntag: 1.0 # {\"$imagepolicy\": \"payments:api:tag\"}",
			want:    "image: " + apiFull + " # {\"$imagepolicy\": \"payments:api\"}\ntag: 1.2.0 # {\"$imagepolicy\": \"payments:api:tag\"}",
			changed: 1,
		},
	} {
		t.Run(tc.name, tc.check)
	}
}

// applyCase is an input and what Apply must make of it in namespace payments.
type applyCase struct {
	name, in, want string
	// images defaults to selected.
	images     map[string]Image
	changed    int
	refused    []int
	unresolved []int
}

func (tc applyCase) check(t *testing.T) {
	t.Helper()
	images := tc.images
	if images == nil {
		images = selected
	}
	out, res := Apply([]byte(tc.in), "payments", images)
	if string(out) != tc.want {
		t.Errorf("Apply output:\n%q\nwant:\n%q", out, tc.want)
	}
	if len(res.Changed) != tc.changed {
		t.Errorf("changed %d values, want %d: %+v", len(res.Changed), tc.changed, res.Changed)
	}
	if got := lines(res.Refused); !equal(got, tc.refused) {
		t.Errorf("refused lines %v, want %v", got, tc.refused)
	}
	if got := lines(res.Unresolved); !equal(got, tc.unresolved) {
		t.Errorf("unresolved lines %v, want %v", got, tc.unresolved)
	}
}

func lines(ms []Marker) []int {
	var out []int
	for _, m := range ms {
		out = append(out, m.Line)
	}
	return out
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
