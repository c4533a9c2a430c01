package render

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// redactedMarker is what scrub puts in place of a value.
const redactedMarker = "[redacted]"

// FuzzRedactor_Scrub decrypts arbitrary documents (YAML, JSON, dotenv or
// anything else) and quotes a value of them in an error message, as library
// errors do. Every remembered value is hidden from the scrubbed message; with nothing
// decrypted the message is left alone.
func FuzzRedactor_Scrub(f *testing.F) {
	f.Add([]byte("password: hunter2-hunter2\n"), "line 3: did not expect ", "hunter2-hunter2", " here")
	f.Add([]byte("DB_PASSWORD=s3cr3t\nAPI_KEY = abcd\n"), "", "s3cr3t", "")
	f.Add([]byte("apiVersion: v1\nkind: Secret\nmetadata: {name: db}\nstringData: {k: \"multi\\nline value\"}\n"), "at ", "line value", "")
	f.Add([]byte("{\"a\": [\"abcd\", {\"b\": \"abcdef\"}]}"), "x", "abcdef", "abcd")
	f.Add([]byte("\xff\xfe binary"), "", "binary", "")
	f.Add([]byte("a: &x [aaaa]\nb: *x\n---\nc: dddd\n"), "", "dddd", "")
	f.Fuzz(func(t *testing.T, doc []byte, prefix, value, suffix string) {
		r := newRedactor()
		r.addDocument(doc)
		msg := prefix + value + suffix
		out := r.scrub(msg)
		for v := range r.values {
			// A value without brackets cannot straddle a marker, so
			// finding it outside one means it was not hidden.
			if !strings.Contains(msg, v) || strings.ContainsAny(v, "[]") || strings.Contains(redactedMarker, v) {
				continue
			}
			if strings.Contains(out, v) {
				t.Fatalf("scrub(%q) = %q still holds the decrypted value %q", msg, out, v)
			}
		}
		if len(r.values) == 0 && out != msg {
			t.Fatalf("nothing decrypted, but scrub changed %q to %q", msg, out)
		}
	})
}

// FuzzRedactor_YAMLValue decrypts a YAML mapping holding one arbitrary
// string value and quotes that value in a message: it never survives.
func FuzzRedactor_YAMLValue(f *testing.F) {
	for _, s := range []string{"hunter2-hunter2", "line1\nline2-long", "  padded  ", "abcd", "ünïcødé", "a: b", "- x\n- y", "&anchor", "'quoted'"} {
		f.Add("key", s)
	}
	f.Fuzz(func(t *testing.T, key, value string) {
		if len(value) < minSecretLen || !utf8.ValidString(value) || !utf8.ValidString(key) {
			return
		}
		k, _ := json.Marshal(key)
		v, _ := json.Marshal(value)
		r := newRedactor()
		r.addDocument([]byte("{" + string(k) + ": " + string(v) + "}"))
		msg := "error converting YAML to JSON near " + value + " in " + key
		if out := r.scrub(msg); strings.Contains(out, value) {
			t.Fatalf("value %q survives in %q", value, out)
		}
	})
}
