package redact

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

const (
	password = "correct-horse-battery-staple"
	token    = "tok-9f8e7d6c5b4a"
	apiKey   = "sk-live-0123456789"
)

// plaintexts is every secret the fixtures hold, as written and as base64.
var plaintexts = []string{
	password, b64(password),
	token, b64(token),
	apiKey, b64(apiKey),
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// secret is a core Secret whose data values are base64-encoded as the API
// server stores them.
func secret(name string, data, stringData map[string]string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "Secret",
		"metadata":   map[string]any{"name": name, "namespace": "payments"},
		"type":       "Opaque",
	}}
	if data != nil {
		m := map[string]any{}
		for k, v := range data {
			m[k] = b64(v)
		}
		obj.Object["data"] = m
	}
	if stringData != nil {
		m := map[string]any{}
		for k, v := range stringData {
			m[k] = v
		}
		obj.Object["stringData"] = m
	}
	return obj
}

func withLastApplied(obj *unstructured.Unstructured) *unstructured.Unstructured {
	applied, err := json.Marshal(obj.Object)
	if err != nil {
		panic(err)
	}
	obj.SetAnnotations(map[string]string{LastAppliedAnnotation: string(applied), "example.com/team": "payments"})
	return obj
}

func list(kind string, items ...map[string]any) *unstructured.Unstructured {
	raw := make([]any, 0, len(items))
	for _, item := range items {
		raw = append(raw, item)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       kind,
		"metadata":   map[string]any{},
		"items":      raw,
	}}
}

func assertNoPlaintext(t *testing.T, obj *unstructured.Unstructured) {
	t.Helper()
	out, err := json.Marshal(obj.Object)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	for _, p := range plaintexts {
		if strings.Contains(string(out), p) {
			t.Errorf("redacted object contains secret %q: %s", p, out)
		}
	}
}

func TestObject_HidesEverySecretValue(t *testing.T) {
	tests := []struct {
		name string
		in   *unstructured.Unstructured
		// paths to values that must now be syncv1.RedactedMarker
		redacted [][]string
	}{
		{
			name:     "data values",
			in:       secret("db", map[string]string{"password": password, "token": token}, nil),
			redacted: [][]string{{"data", "password"}, {"data", "token"}},
		},
		{
			name:     "stringData values",
			in:       secret("db", nil, map[string]string{"password": password, "apiKey": apiKey}),
			redacted: [][]string{{"stringData", "password"}, {"stringData", "apiKey"}},
		},
		{
			name:     "data and stringData together",
			in:       secret("db", map[string]string{"token": token}, map[string]string{"apiKey": apiKey}),
			redacted: [][]string{{"data", "token"}, {"stringData", "apiKey"}},
		},
		{
			name: "kubectl last-applied annotation, which repeats the values",
			in:   withLastApplied(secret("db", map[string]string{"password": password}, map[string]string{"token": token})),
			redacted: [][]string{
				{"data", "password"}, {"stringData", "token"},
				{"metadata", "annotations", LastAppliedAnnotation},
			},
		},
		{
			name: "data that is not a map is hidden whole",
			in: &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "odd"},
				"data": password,
			}},
			redacted: [][]string{{"data"}},
		},
		{
			name: "Secret with an unparsable apiVersion is still hidden",
			in: &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "a/b/c", "kind": "Secret", "metadata": map[string]any{"name": "odd"},
				"stringData": map[string]any{"token": token},
			}},
			redacted: [][]string{{"stringData", "token"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Object(tt.in)
			assertNoPlaintext(t, got)
			for _, path := range tt.redacted {
				v, found, err := unstructured.NestedFieldNoCopy(got.Object, path...)
				if err != nil || !found || v != syncv1.RedactedMarker {
					t.Errorf("%s = %v (found %v, err %v), want %q", strings.Join(path, "."), v, found, err, syncv1.RedactedMarker)
				}
			}
			if got.GetAnnotations()["example.com/team"] != tt.in.GetAnnotations()["example.com/team"] {
				t.Errorf("other annotations changed: %v", got.GetAnnotations())
			}
		})
	}
}

func TestObject_HidesSecretsInsideLists(t *testing.T) {
	bare := secret("bare", map[string]string{"token": token}, nil).Object
	delete(bare, "apiVersion")
	delete(bare, "kind")
	tests := []struct {
		name string
		in   *unstructured.Unstructured
	}{
		{"Secret in a List", list("List",
			secret("db", map[string]string{"password": password}, map[string]string{"apiKey": apiKey}).Object,
			map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}},
		)},
		{"Secret with last-applied annotation in a List", list("List",
			withLastApplied(secret("db", map[string]string{"password": password}, map[string]string{"token": token})).Object,
		)},
		{"items of a SecretList without kind", list("SecretList", bare)},
		{"Secret in a List in a List", list("List",
			list("List", secret("db", nil, map[string]string{"apiKey": apiKey}).Object).Object,
		)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertNoPlaintext(t, Object(tt.in))
		})
	}
}

func TestObject_LeavesOtherObjectsAlone(t *testing.T) {
	tests := []struct {
		name string
		in   *unstructured.Unstructured
	}{
		{"ConfigMap data is not secret", &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"},
			"data": map[string]any{"mode": "fast"},
		}}},
		{"a custom kind named Secret is not a core Secret", &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1", "kind": "Secret", "metadata": map[string]any{"name": "s"},
			"data": map[string]any{"ref": "vault:/kv/db"},
		}}},
		{"Secret without values", secret("empty", nil, nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Object(tt.in); !reflect.DeepEqual(got, tt.in) {
				t.Errorf("Object() = %v, want it unchanged %v", got, tt.in)
			}
		})
	}
}

func TestObject_DoesNotModifyItsInput(t *testing.T) {
	in := withLastApplied(secret("db", map[string]string{"password": password}, map[string]string{"token": token}))
	before := in.DeepCopy()
	_ = Object(in)
	if !reflect.DeepEqual(in, before) {
		t.Errorf("Object() modified its input")
	}
}

func TestObject_NilIsNil(t *testing.T) {
	if got := Object(nil); got != nil {
		t.Errorf("Object(nil) = %v, want nil", got)
	}
}

func TestReplace_PassesEverySecretValueToConceal(t *testing.T) {
	in := list("List",
		secret("a", map[string]string{"password": password}, nil).Object,
		secret("b", nil, map[string]string{"token": token}).Object,
	)
	var seen []string
	got := Replace(in, func(v any) any {
		seen = append(seen, v.(string))
		return "concealed"
	})
	assertNoPlaintext(t, got)
	want := map[string]bool{b64(password): true, token: true}
	if len(seen) != len(want) {
		t.Fatalf("conceal saw %v, want %v", seen, want)
	}
	for _, v := range seen {
		if !want[v] {
			t.Errorf("conceal saw %q, want one of %v", v, want)
		}
	}
}

func TestPair_ShowsWhichValuesChangeWithoutRevealingThem(t *testing.T) {
	const other = "other-value-42"
	tests := []struct {
		name        string
		live        *unstructured.Unstructured
		desired     *unstructured.Unstructured
		wantLive    map[string]any
		wantDesired map[string]any
	}{
		{
			name:        "unchanged value",
			live:        secret("db", map[string]string{"password": password}, nil),
			desired:     secret("db", map[string]string{"password": password}, nil),
			wantLive:    map[string]any{"data.password": syncv1.RedactedUnchangedMarker},
			wantDesired: map[string]any{"data.password": syncv1.RedactedUnchangedMarker},
		},
		{
			name:        "changed value",
			live:        secret("db", map[string]string{"password": password}, nil),
			desired:     secret("db", map[string]string{"password": other}, nil),
			wantLive:    map[string]any{"data.password": syncv1.RedactedOldMarker},
			wantDesired: map[string]any{"data.password": syncv1.RedactedNewMarker},
		},
		{
			name:        "added and removed keys",
			live:        secret("db", map[string]string{"token": token, "keep": apiKey}, nil),
			desired:     secret("db", map[string]string{"password": password, "keep": apiKey}, nil),
			wantLive:    map[string]any{"data.token": syncv1.RedactedMarker, "data.keep": syncv1.RedactedUnchangedMarker},
			wantDesired: map[string]any{"data.password": syncv1.RedactedMarker, "data.keep": syncv1.RedactedUnchangedMarker},
		},
		{
			name:        "stringData compared key by key",
			live:        secret("db", nil, map[string]string{"a": token, "b": apiKey}),
			desired:     secret("db", nil, map[string]string{"a": token, "b": other}),
			wantLive:    map[string]any{"stringData.a": syncv1.RedactedUnchangedMarker, "stringData.b": syncv1.RedactedOldMarker},
			wantDesired: map[string]any{"stringData.a": syncv1.RedactedUnchangedMarker, "stringData.b": syncv1.RedactedNewMarker},
		},
		{
			name:        "live Secret missing: everything is new",
			live:        nil,
			desired:     secret("db", map[string]string{"password": password}, map[string]string{"token": token}),
			wantDesired: map[string]any{"data.password": syncv1.RedactedMarker, "stringData.token": syncv1.RedactedMarker},
		},
		{
			name:     "desired Secret missing: everything is old",
			live:     secret("db", map[string]string{"password": password}, nil),
			desired:  nil,
			wantLive: map[string]any{"data.password": syncv1.RedactedMarker},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			live, desired := Pair(tt.live, tt.desired)
			for _, side := range []struct {
				name string
				got  *unstructured.Unstructured
				want map[string]any
			}{{"live", live, tt.wantLive}, {"desired", desired, tt.wantDesired}} {
				if side.want == nil {
					if side.got != nil {
						t.Errorf("%s = %v, want nil", side.name, side.got)
					}
					continue
				}
				assertNoPlaintext(t, side.got)
				for path, want := range side.want {
					got, _, _ := unstructured.NestedFieldNoCopy(side.got.Object, strings.Split(path, ".")...)
					if got != want {
						t.Errorf("%s %s = %v, want %q", side.name, path, got, want)
					}
				}
			}
		})
	}
}

func TestPair_ComparesLastAppliedAnnotations(t *testing.T) {
	live := withLastApplied(secret("db", map[string]string{"password": password}, nil))
	desired := withLastApplied(secret("db", map[string]string{"password": token}, nil))
	gotLive, gotDesired := Pair(live, desired)
	assertNoPlaintext(t, gotLive)
	assertNoPlaintext(t, gotDesired)
	if a := gotLive.GetAnnotations()[LastAppliedAnnotation]; a != syncv1.RedactedOldMarker {
		t.Errorf("live annotation = %q, want %q", a, syncv1.RedactedOldMarker)
	}
	if a := gotDesired.GetAnnotations()[LastAppliedAnnotation]; a != syncv1.RedactedNewMarker {
		t.Errorf("desired annotation = %q, want %q", a, syncv1.RedactedNewMarker)
	}
}

func TestPair_RedactsNonSecretPairsLikeObject(t *testing.T) {
	secretList := list("List", secret("db", map[string]string{"password": password}, nil).Object)
	configMap := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"},
		"data": map[string]any{"mode": "fast"},
	}}
	tests := []struct {
		name          string
		live, desired *unstructured.Unstructured
	}{
		{"two Lists holding Secrets", secretList, secretList.DeepCopy()},
		{"ConfigMaps", configMap, configMap.DeepCopy()},
		{"a Secret and a ConfigMap", secret("db", nil, map[string]string{"token": token}), configMap},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gotLive, gotDesired := Pair(tt.live, tt.desired)
			if !reflect.DeepEqual(gotLive, Object(tt.live)) || !reflect.DeepEqual(gotDesired, Object(tt.desired)) {
				t.Errorf("Pair() = %v, %v; want Object() of each side", gotLive, gotDesired)
			}
		})
	}
}

func TestPair_DoesNotModifyItsInputs(t *testing.T) {
	live := secret("db", map[string]string{"password": password}, nil)
	desired := secret("db", map[string]string{"password": token}, nil)
	beforeLive, beforeDesired := live.DeepCopy(), desired.DeepCopy()
	_, _ = Pair(live, desired)
	if !reflect.DeepEqual(live, beforeLive) || !reflect.DeepEqual(desired, beforeDesired) {
		t.Errorf("Pair() modified its inputs")
	}
}

func TestIsSecret_OnlyCoreSecrets(t *testing.T) {
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		want bool
	}{
		{"core Secret", secret("db", nil, nil), true},
		{"custom kind named Secret", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Secret"}}, false},
		{"ConfigMap", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}, false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsSecret(tt.obj); got != tt.want {
				t.Errorf("IsSecret() = %v, want %v", got, tt.want)
			}
		})
	}
}
