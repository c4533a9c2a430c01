package setters

import (
	"bytes"
	"testing"
)

// FuzzSetters holds two promises on any input: no panic, and bytes outside
// the values of valid markers never change.
func FuzzSetters(f *testing.F) {
	for _, seed := range []string{
		"image: ghcr.io/acme/api:1.0.0 # {\"$imagepolicy\": \"payments:api\"}\n",
		"tag: '1.0' # {\"$imagepolicy\": \"payments:api:tag\"}\r\n",
		"- x:1 # {\"$imagepolicy\": \"payments:web:name\"}",
		"a: x # {\"$imagepolicy\": \"a:b:c:d\"}\n",
		"a: |\n  b: x # {\"$imagepolicy\": \"payments:api\"}\n",
		"k: \"unterminated # {\"$imagepolicy\": \"payments:api\"}\n",
		"- - - v # {\"$imagepolicy\": \"payments:api\"}",
		"a: b\n---\n# only a comment\n",
		"images:\n- name: api\n  newTag: 1.0 # {\"$imagepolicy\": \"payments:api:tag\"}\n" +
			"  digest: sha256:00 # {\"$imagepolicy\": \"payments:api:digest\"}\n",
		"newDigest: 'sha256:00'\t# {\"$imagepolicy\":\"payments:web:digest\"}\r\n",
		"patches:\n  - patch: |\n      value: x:1 # {\"$imagepolicy\": \"payments:api\"}\n\n" +
			"    target:\n      image: x:1 # {\"$imagepolicy\": \"payments:api\"}\n",
		"- - >-\n    x:1 # {\"$imagepolicy\": \"payments:api\"}\n  - x:1 # {\"$imagepolicy\": \"payments:api:digest\"}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		markers := Find(data)
		out, res := Apply(data, "payments", selected)
		if len(markers) == 0 && !bytes.Equal(out, data) {
			t.Fatalf("no valid marker, yet Apply changed %q into %q", data, out)
		}
		if len(res.Changed)+len(res.Refused)+len(res.Unresolved) > len(markers) {
			t.Fatalf("Apply reported more markers than Find found in %q", data)
		}
		in := bytes.Split(data, []byte("\n"))
		got := bytes.Split(out, []byte("\n"))
		if len(in) != len(got) {
			t.Fatalf("Apply changed the number of lines of %q: %q", data, out)
		}
		changed := map[int]bool{}
		for _, c := range res.Changed {
			changed[c.Line] = true
		}
		for i := range in {
			if !changed[i+1] && !bytes.Equal(in[i], got[i]) {
				t.Fatalf("line %d changed without a marker: %q -> %q", i+1, in[i], got[i])
			}
		}
		again, res2 := Apply(out, "payments", selected)
		if len(res2.Changed) != 0 || !bytes.Equal(again, out) {
			t.Fatalf("Apply is not idempotent on %q", data)
		}
	})
}
