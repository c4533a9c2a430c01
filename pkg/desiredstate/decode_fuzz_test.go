package desiredstate

import (
	"bytes"
	"compress/gzip"
	"errors"
	"testing"
)

// FuzzDecode feeds Decode what a desired-state Secret may hold: arbitrary
// bytes (wrap false) or arbitrary plaintext gzip'd (wrap true), so the
// fuzzer reaches the JSON parser as well as the gzip reader. A refusal is an
// error and no objects; what Decode accepts re-encodes to a canonical form
// that is a fixed point: decoding and encoding it again gives the same bytes
// and digest.
func FuzzDecode(f *testing.F) {
	seeds := []string{
		`[]`,
		`[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"n"},"data":{"k":"v"}}]`,
		`[{"kind":"Secret","apiVersion":"v1","metadata":{"name":"s"},"data":{"k":"c2VjcmV0"}},{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"n"}}]`,
		`[{"a":1.0,"b":1e300,"c":-9223372036854775808,"d":"\u003c\u0000"}]`,
		`[1]`, `["x"]`, `[null]`, `{}`, `[{}`, `[{"a":1e400}]`, ``, `[[]]`,
	}
	for _, s := range seeds {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	f.Add([]byte{0x1f, 0x8b, 0x08, 0x00}, false)
	f.Fuzz(func(t *testing.T, input []byte, wrap bool) {
		data := input
		if wrap {
			data = gzipped(t, func(w *gzip.Writer) {
				if _, err := w.Write(input); err != nil {
					t.Fatal(err)
				}
			})
		}
		objs, err := Decode(data)
		if err != nil {
			if objs != nil {
				t.Fatalf("Decode refused (%v) but returned %d objects", err, len(objs))
			}
			return
		}
		for i, o := range objs {
			if o == nil || o.Object == nil {
				t.Fatalf("Decode returned an empty object at %d", i)
			}
		}
		first, digest, err := Encode(objs)
		if errors.Is(err, ErrTooLarge) {
			return
		}
		if err != nil {
			t.Fatalf("Encode of what Decode accepted: %v", err)
		}
		again, err := Decode(first)
		if err != nil {
			t.Fatalf("Decode of Encode's output: %v", err)
		}
		if len(again) != len(objs) {
			t.Fatalf("round trip changed the object count: %d, then %d", len(objs), len(again))
		}
		second, digest2, err := Encode(again)
		if err != nil {
			t.Fatalf("second Encode: %v", err)
		}
		if digest2 != digest || !bytes.Equal(first, second) {
			t.Fatalf("canonical encoding is not a fixed point: digest %s then %s", digest, digest2)
		}
		if name := RevisionName("app", digest); len(name) != len("app-")+revisionHashLen {
			t.Fatalf("RevisionName = %q", name)
		}
	})
}
