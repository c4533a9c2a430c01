package desired

import (
	"strings"
	"testing"
)

// TestPrepare_BytesFieldThatIsNotBase64IsRefusedNamingTheKeyNotTheValue:
// the API server retries nothing for a value it cannot decode as base64, so
// the desired state is refused before planning, and the message, which ends
// up in conditions and Events, names the key but never quotes the value.
func TestPrepare_BytesFieldThatIsNotBase64IsRefusedNamingTheKeyNotTheValue(t *testing.T) {
	const secret = "hunter2-s3cret*!"
	tests := []struct {
		name     string
		manifest string
		// mention is empty when the object is accepted.
		mention string
	}{
		{"Secret data that is base64", "apiVersion: v1\nkind: Secret\nmetadata: {name: db}\ndata: {password: aHVudGVyMg==}", ""},
		{"Secret data with line breaks, as base64 tools wrap it", "apiVersion: v1\nkind: Secret\nmetadata: {name: db}\ndata: {password: \"aHVu\\ndGVyMg==\"}", ""},
		{"Secret data that is empty", "apiVersion: v1\nkind: Secret\nmetadata: {name: db}\ndata: {password: \"\"}", ""},
		{"Secret stringData is not base64 and need not be", "apiVersion: v1\nkind: Secret\nmetadata: {name: db}\nstringData: {password: " + secret + "}", ""},
		{"Secret data that is not base64", "apiVersion: v1\nkind: Secret\nmetadata: {name: db}\ndata: {password: " + secret + "}",
			`1 invalid object(s): Secret shop/db: data[password]: not base64`},
		{"Secret data without its padding", "apiVersion: v1\nkind: Secret\nmetadata: {name: db}\ndata: {password: aHVudGVyMg}",
			"data[password]: not base64"},
		{"Secret data in the URL alphabet", "apiVersion: v1\nkind: Secret\nmetadata: {name: db}\ndata: {password: \"-_-_\"}",
			"data[password]: not base64"},
		{"the first bad key in name order is named", "apiVersion: v1\nkind: Secret\nmetadata: {name: db}\ndata: {b: " + secret + ", a: " + secret + ", ok: aGk=}",
			"data[a]: not base64"},
		{"Secret data that is not a string", "apiVersion: v1\nkind: Secret\nmetadata: {name: db}\ndata: {password: {value: " + secret + "}}",
			"data[password]: must be a base64 string, not map[string]interface {}"},
		{"ConfigMap binaryData that is not base64", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: blobs}\nbinaryData: {logo: " + secret + "}",
			`ConfigMap shop/blobs: binaryData[logo]: not base64`},
		{"ConfigMap data is text", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: " + secret + "}", ""},
		{"a custom kind named Secret is not the core one", crd + "\n---\n" + "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\ndata: {x: " + secret + "}", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Prepare(objects(t, strings.Split(tt.manifest, "\n---\n")...), "shop", "shop/app", scopeOf)
			if tt.mention == "" {
				if err != nil {
					t.Fatalf("Prepare() = %v, want the object accepted", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.mention) {
				t.Fatalf("Prepare() error = %v, want it to mention %q", err, tt.mention)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("Prepare() error %q quotes the value", err)
			}
		})
	}
}
