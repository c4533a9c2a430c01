package redact

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// FuzzRedact builds a core Secret (alone, in a List or in a SecretList as
// the API server serves it) from arbitrary keys and values, in data,
// stringData, a non-map data field and the kubectl last-applied annotation,
// under arbitrary apiVersions. Whenever the object is a core Secret, neither
// Object nor Pair lets a value through, Pair tells unchanged from changed
// values, and the inputs are never modified.
func FuzzRedact(f *testing.F) {
	f.Add("v1", "password", "hunter2-hunter2", "hunter2-hunter2", uint8(0))
	f.Add("v1", "token", "dG9rZW4=", "b3RoZXI=", uint8(1))
	f.Add("/v1", "", "x", "y", uint8(2))
	f.Add("a/b/c", "k", "value", "value", uint8(3))
	f.Add("", "k", "\x00\xff", "", uint8(4))
	f.Add("apps/v1", "k", "not-a-core-secret", "", uint8(5))
	f.Fuzz(func(t *testing.T, apiVersion, key, value, newValue string, shape uint8) {
		// The marker makes the value unmistakable in the output, whatever
		// short or common string the fuzzer picks.
		secret, newSecret := "s3cr3t:"+value, "s3cr3t:"+newValue
		if strings.Contains(key, "s3cr3t:") || strings.Contains(apiVersion, "s3cr3t:") {
			return
		}
		build := func(v string) *unstructured.Unstructured {
			obj := map[string]any{
				"apiVersion": apiVersion,
				"kind":       "Secret",
				"metadata": map[string]any{
					"name": "db", "namespace": "team",
					"annotations": map[string]any{LastAppliedAnnotation: `{"stringData":{"k":"` + v + `"}}`},
				},
			}
			switch shape % 3 {
			case 0:
				obj["data"] = map[string]any{key: v}
			case 1:
				obj["stringData"] = map[string]any{key: v, "other": v}
			case 2:
				obj["data"] = v
			}
			switch shape / 3 % 3 {
			case 1:
				return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "List", "items": []any{obj}}}
			case 2:
				delete(obj, "kind")
				delete(obj, "apiVersion")
				return &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": "SecretList", "items": []any{obj}}}
			}
			return &unstructured.Unstructured{Object: obj}
		}
		// A core Secret is one whose apiVersion has no group; an apiVersion
		// that does not parse counts as core, as doubt must redact.
		core := strings.Count(apiVersion, "/") != 1 || strings.HasPrefix(apiVersion, "/")
		leaks := func(what string, obj *unstructured.Unstructured, values ...string) {
			t.Helper()
			out, err := json.Marshal(obj.Object)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range values {
				quoted, _ := json.Marshal(v)
				if strings.Contains(string(out), strings.Trim(string(quoted), `"`)) {
					t.Fatalf("%s leaks a Secret value: %s", what, out)
				}
			}
		}

		live, desired := build(secret), build(newSecret)
		liveCopy, desiredCopy := live.DeepCopy(), desired.DeepCopy()
		redacted := Object(live)
		if core {
			leaks("Object", redacted, secret)
		} else if !reflect.DeepEqual(redacted, live) {
			t.Fatalf("Object changed %s, which is no core Secret", apiVersion)
		}
		outLive, outDesired := Pair(live, desired)
		if !reflect.DeepEqual(live, liveCopy) || !reflect.DeepEqual(desired, desiredCopy) {
			t.Fatal("redaction modified its input")
		}
		if !core {
			return
		}
		leaks("Pair (live)", outLive, secret, newSecret)
		leaks("Pair (desired)", outDesired, secret, newSecret)
		if shape/3%3 == 0 {
			want := syncv1.RedactedUnchangedMarker
			if secret != newSecret {
				want = syncv1.RedactedNewMarker
			}
			annotations := outDesired.GetAnnotations()
			if annotations[LastAppliedAnnotation] != want {
				t.Fatalf("Pair marks the last-applied annotation %q, want %q", annotations[LastAppliedAnnotation], want)
			}
		}
	})
}
