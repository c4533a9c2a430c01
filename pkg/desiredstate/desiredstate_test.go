package desiredstate

import (
	"bytes"
	"compress/gzip"
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
)

func obj(apiVersion, kind, namespace, name string, extra map[string]any) *unstructured.Unstructured {
	meta := map[string]any{"name": name}
	if namespace != "" {
		meta["namespace"] = namespace
	}
	o := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": meta}
	for k, v := range extra {
		o[k] = v
	}
	return &unstructured.Unstructured{Object: o}
}

func sample() []*unstructured.Unstructured {
	return []*unstructured.Unstructured{
		obj("apps/v1", "Deployment", "shop", "api", map[string]any{
			"spec": map[string]any{"replicas": int64(3), "paused": false, "ratio": 0.5},
		}),
		obj("v1", "ConfigMap", "shop", "api", map[string]any{"data": map[string]any{"z": "1", "a": "2"}}),
		obj("v1", "Namespace", "", "shop", nil),
		obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "widgets.example.com", nil),
		obj("v1", "ConfigMap", "shop", "web", nil),
	}
}

func reversed(in []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(in))
	for i, o := range in {
		out[len(in)-1-i] = o
	}
	return out
}

func TestEncode_OrderOfObjectsDoesNotChangeDigestOrBytes(t *testing.T) {
	data1, digest1, err := Encode(sample())
	if err != nil {
		t.Fatal(err)
	}
	shuffled := sample()
	shuffled[0], shuffled[3] = shuffled[3], shuffled[0]
	for _, objs := range [][]*unstructured.Unstructured{reversed(sample()), shuffled} {
		data2, digest2, err := Encode(objs)
		if err != nil {
			t.Fatal(err)
		}
		if digest1 != digest2 {
			t.Errorf("digest changed with order: %s != %s", digest1, digest2)
		}
		if !bytes.Equal(data1, data2) {
			t.Error("data changed with order")
		}
	}
	if !regexp.MustCompile(`^sha256:[a-f0-9]{64}$`).MatchString(digest1) {
		t.Errorf("digest %q does not match the Revision's digest pattern", digest1)
	}
}

func TestEncode_ObjectsWithTheSameIdentityAreOrderedByContent(t *testing.T) {
	a := obj("v1", "ConfigMap", "ns", "same", map[string]any{"data": map[string]any{"k": "a"}})
	b := obj("v1", "ConfigMap", "ns", "same", map[string]any{"data": map[string]any{"k": "b"}})
	_, d1, err := Encode([]*unstructured.Unstructured{a, b})
	if err != nil {
		t.Fatal(err)
	}
	_, d2, err := Encode([]*unstructured.Unstructured{b, a})
	if err != nil {
		t.Fatal(err)
	}
	if d1 != d2 {
		t.Errorf("digest depends on the order of objects with the same identity")
	}
}

func TestEncode_CanonicalJSONIsSortedByIdentityWithSortedKeys(t *testing.T) {
	data, _, err := Encode(sample())
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var plain bytes.Buffer
	if _, err := plain.ReadFrom(zr); err != nil {
		t.Fatal(err)
	}
	got := plain.String()
	// Core group ("") first, then apiextensions.k8s.io, then apps; inside a
	// group by kind, namespace and name; keys of every object sorted.
	order := []string{
		`{"apiVersion":"v1","data":{"a":"2","z":"1"},"kind":"ConfigMap","metadata":{"name":"api","namespace":"shop"}}`,
		`"name":"web"`,
		`"kind":"Namespace"`,
		`"kind":"CustomResourceDefinition"`,
		`"kind":"Deployment"`,
	}
	last := -1
	for _, s := range order {
		i := strings.Index(got, s)
		if i < 0 {
			t.Fatalf("canonical JSON lacks %s:\n%s", s, got)
		}
		if i < last {
			t.Errorf("%s is out of order in:\n%s", s, got)
		}
		last = i
	}
}

func TestEncode_DifferentContentGivesDifferentDigest(t *testing.T) {
	_, d1, err := Encode(sample())
	if err != nil {
		t.Fatal(err)
	}
	changed := sample()
	changed[1].Object["data"].(map[string]any)["a"] = "3"
	_, d2, err := Encode(changed)
	if err != nil {
		t.Fatal(err)
	}
	if d1 == d2 {
		t.Error("a changed value kept the digest")
	}
}

func TestEncode_RefusesEmptyObject(t *testing.T) {
	if _, _, err := Encode([]*unstructured.Unstructured{nil}); err == nil {
		t.Fatal("Encode accepted a nil object")
	}
}

func TestDecode_RoundTripKeepsObjectsAndDigest(t *testing.T) {
	data, digest, err := Encode(sample())
	if err != nil {
		t.Fatal(err)
	}
	objs, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != len(sample()) {
		t.Fatalf("decoded %d objects, want %d", len(objs), len(sample()))
	}
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			// Integers stay int64, as unstructured objects hold them.
			if r, _, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "replicas"); r != int64(3) {
				t.Errorf("replicas decoded as %#v, want int64(3)", r)
			}
			want := sample()[0]
			if !reflect.DeepEqual(o.Object, want.Object) {
				t.Errorf("Deployment changed in the round trip:\n got %#v\nwant %#v", o.Object, want.Object)
			}
		}
	}
	data2, digest2, err := Encode(objs)
	if err != nil {
		t.Fatal(err)
	}
	if digest2 != digest || !bytes.Equal(data2, data) {
		t.Error("re-encoding decoded objects changed the digest or data")
	}
}

func TestDecode_EmptyDesiredStateRoundTrips(t *testing.T) {
	data, _, err := Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 0 {
		t.Errorf("decoded %d objects from an empty desired state", len(objs))
	}
}

func gzipped(t *testing.T, write func(w *gzip.Writer)) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	write(zw)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestDecode_RefusesDataDecompressingPastTheLimit(t *testing.T) {
	// Whitespace is valid JSON around an empty array: only the size can fail.
	data := gzipped(t, func(w *gzip.Writer) {
		chunk := bytes.Repeat([]byte(" "), 1<<20)
		for written := 0; written <= MaxDecodedBytes; written += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Write([]byte("[]")); err != nil {
			t.Fatal(err)
		}
	})
	if len(data) > 1<<20 {
		t.Fatalf("test data is %d bytes compressed; the point is a small input", len(data))
	}
	_, err := Decode(data)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Decode error = %v, want ErrTooLarge", err)
	}
	if !strings.Contains(err.Error(), "67108864") {
		t.Errorf("error %q does not state the limit", err)
	}
}

func TestDecode_RefusesMalformedData(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{name: "not gzip", data: []byte("[]"), want: "not gzip"},
		{name: "not JSON", data: gzipped(t, func(w *gzip.Writer) { _, _ = w.Write([]byte("{")) }), want: "not a JSON array"},
		{name: "not an object", data: gzipped(t, func(w *gzip.Writer) { _, _ = w.Write([]byte(`[1]`)) }), want: "item 0"},
		{name: "null item", data: gzipped(t, func(w *gzip.Writer) { _, _ = w.Write([]byte(`[null]`)) }), want: "item 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(tt.data)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Decode error = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestRevisionName(t *testing.T) {
	digest := "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	long := strings.Repeat("a", 253)
	cutAtDash := strings.Repeat("b", 241) + "-" + strings.Repeat("c", 11)
	cutAtDot := strings.Repeat("d", 240) + ".-" + strings.Repeat("e", 11)
	tests := []struct {
		name, app, want string
	}{
		{name: "short name keeps the app name", app: "shop", want: "shop-0123456789"},
		{name: "longest app name is shortened", app: long, want: strings.Repeat("a", 242) + "-0123456789"},
		{name: "cut after a dash drops it", app: cutAtDash, want: strings.Repeat("b", 241) + "-0123456789"},
		{name: "cut after a dot drops it", app: cutAtDot, want: strings.Repeat("d", 240) + "-0123456789"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RevisionName(tt.app, digest)
			if got != tt.want {
				t.Errorf("RevisionName = %q, want %q", got, tt.want)
			}
			if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 {
				t.Errorf("RevisionName %q is not a DNS subdomain: %v", got, errs)
			}
		})
	}
}

func TestRevisionName_SameContentSameName(t *testing.T) {
	_, d1, err := Encode(sample())
	if err != nil {
		t.Fatal(err)
	}
	_, d2, err := Encode(reversed(sample()))
	if err != nil {
		t.Fatal(err)
	}
	if RevisionName("shop", d1) != RevisionName("shop", d2) {
		t.Error("the same content was given two Revision names")
	}
}

func TestPreviewRevisionName_EveryCommitHasItsOwnAndNeverADesiredName(t *testing.T) {
	digest := "sha256:" + strings.Repeat("a", 64)
	a := PreviewRevisionName("web", "pr-12", digest, strings.Repeat("1", 40))
	b := PreviewRevisionName("web", "pr-12", digest, strings.Repeat("2", 40))
	if a == b {
		t.Errorf("two commits share the preview Revision %s", a)
	}
	if a == RevisionName("web", digest) || !strings.HasPrefix(a, "web-pr-12-") || len(a) != len("web-pr-12-")+10 {
		t.Errorf("preview Revision name %s", a)
	}
	if long := PreviewRevisionName(strings.Repeat("x", 300), "pr-1", digest, ""); len(long) > 253 {
		t.Errorf("name of %d characters", len(long))
	}
}
