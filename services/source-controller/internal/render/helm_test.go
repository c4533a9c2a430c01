package render

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// webChart is a chart with helpers, a hook, NOTES.txt, a CRD, a lookup, a
// subchart behind a condition and a subchart vendored as an archive.
func webChart(t *testing.T) map[string]string {
	return map[string]string{
		"Chart.yaml": `apiVersion: v2
name: web
version: 1.0.0
dependencies:
- name: sidecar
  version: 0.1.0
  condition: sidecar.enabled
- name: packed
  version: 0.1.0
`,
		"values.yaml": `replicaCount: 1
image: example.com/web:1
removeMe: chart-default
nested: {a: chart, b: chart, c: chart}
sidecar: {enabled: false}
`,
		"templates/_helpers.tpl": `{{- define "web.fullname" -}}{{ .Release.Name }}-web{{- end -}}`,
		"templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "web.fullname" . }}
  namespace: {{ .Release.Namespace }}
  annotations:
    nested-a: {{ .Values.nested.a }}
    nested-b: {{ .Values.nested.b }}
    nested-c: {{ .Values.nested.c }}
    image: {{ .Values.image }}
    {{- if hasKey .Values "removeMe" }}
    removeMe: {{ .Values.removeMe }}
    {{- end }}
    kube-version: {{ .Capabilities.KubeVersion.Version }}
spec:
  replicas: {{ .Values.replicaCount }}
`,
		"templates/secret.yaml": `apiVersion: v1
kind: Secret
metadata:
  name: {{ include "web.fullname" . }}
stringData:
  password: {{ .Values.password | default "none" }}
`,
		"templates/migrate.yaml": `apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
    helm.sh/hook-weight: "-5"
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: m, image: example.com/migrate:1}]
`,
		"templates/lookup.yaml": `{{- if lookup "v1" "Namespace" "" "default" }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: found-in-cluster
{{- end }}
`,
		"templates/NOTES.txt": "Thanks for installing {{ .Release.Name }}.\n",
		"crds/widget.yaml": `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
`,
		"charts/sidecar/Chart.yaml":        "apiVersion: v2\nname: sidecar\nversion: 0.1.0\n",
		"charts/sidecar/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sidecar\n",
		"charts/packed-0.1.0.tgz": string(tgz(t, "packed", map[string]string{
			"Chart.yaml":        "apiVersion: v2\nname: packed\nversion: 0.1.0\n",
			"values.yaml":       "greeting: hello\n",
			"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: packed\ndata:\n  greeting: {{ .Values.greeting }}\n",
		})),
	}
}

// tgz packs files as a chart archive whose entries sit under top/.
func tgz(t *testing.T, top string, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		data := files[name]
		if err := tw.WriteHeader(&tar.Header{Name: top + "/" + name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// under prefixes every path of files with dir.
func under(dir string, files map[string]string) map[string]string {
	out := make(map[string]string, len(files))
	for name, content := range files {
		out[dir+"/"+name] = content
	}
	return out
}

func merge(maps ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range maps {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func TestRender_Helm_ChartFromGitMergesValuesInOrderAndDecryptsValuesFiles(t *testing.T) {
	root, parent := newRepo(t, merge(under("deploy/web", webChart(t)), map[string]string{
		"deploy/web/values-prod.yaml":   "replicaCount: 2\nnested: {a: file, b: file}\n",
		"deploy/web/secrets.yaml":       encrypt("password: helm-secret-password\n"),
		"deploy/web/values-unused.yaml": encrypt("password: unused\n"),
		"other-team/secrets.yaml":       encrypt("password: theirs\n"),
	}), nil)
	dec := &testDecryptor{}
	objs := mustRender(t, Request{
		Root: root, Path: "deploy/web", Type: syncv1.RenderHelm, Application: "shop", Decryptor: dec,
		Helm: HelmOptions{
			Namespace:   "prod",
			ValuesFiles: []string{"values-prod.yaml", "secrets.yaml"},
			ValuesFrom: []map[string]any{
				{"replicaCount": 4, "nested": map[string]any{"b": "from"}},
				{"image": "example.com/web:from"},
			},
			Values: map[string]any{"replicaCount": 5, "removeMe": nil},
		},
	})

	assertEqual(t, "objects", sortedCopy(ids(objs)), []string{
		"ConfigMap packed", "CustomResourceDefinition widgets.example.com", "Deployment prod/shop-web",
		"Job migrate", "Secret shop-web",
	})
	deploy := find(t, objs, "Deployment", "shop-web")
	if r, _, _ := unstructuredInt(deploy.Object, "spec", "replicas"); r != int64(5) {
		t.Errorf("replicas = %#v, want 5 from values, which merge last", r)
	}
	want := map[string]string{
		"nested-a": "file",                 // valuesFiles over the chart
		"nested-b": "from",                 // valuesFrom over valuesFiles
		"nested-c": "chart",                // the chart's default, untouched
		"image":    "example.com/web:from", // the second valuesFrom entry
	}
	got := deploy.GetAnnotations()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("annotation %s = %q, want %q", k, got[k], v)
		}
	}
	if _, ok := got["removeMe"]; ok {
		t.Error("a null in values did not remove the chart's default")
	}
	if got["kube-version"] != defaultKubeVersion {
		t.Errorf(".Capabilities.KubeVersion = %q, want %s", got["kube-version"], defaultKubeVersion)
	}
	if pw, _, _ := unstructuredInt(find(t, objs, "Secret", "shop-web").Object, "stringData", "password"); pw != "helm-secret-password" {
		t.Errorf("password = %v, want the value from the decrypted values file", pw)
	}
	if hook := find(t, objs, "Job", "migrate").GetAnnotations()["helm.sh/hook"]; hook != "pre-install,pre-upgrade" {
		t.Errorf("helm.sh/hook = %q, want it kept for the sync-controller", hook)
	}
	if g, _, _ := unstructuredInt(find(t, objs, "ConfigMap", "packed").Object, "data", "greeting"); g != "hello" {
		t.Errorf("packed subchart greeting = %v", g)
	}

	assertEqual(t, "files given to the Decryptor", dec.seenPaths(), []string{
		"deploy/web/secrets.yaml", "deploy/web/values-prod.yaml", "deploy/web/values.yaml",
	})
	assertNoPlaintextOnDisk(t, parent, "helm-secret-password")
}

func TestRender_Helm_SubchartConditionReleaseNameAndKubeVersion(t *testing.T) {
	// The chart at the top of the checkout, beside .git and ignored files.
	root, _ := newRepo(t, merge(webChart(t), map[string]string{
		".git/config":       "[core]\n",
		".helmignore":       "ignored/\n",
		"ignored/huge.yaml": "not: [part, of, the chart\n",
		"files/kept.txt":    "kept",
		"templates/files.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: files}
data:
  names: "{{ range $path, $_ := .Files.Glob "**" }}{{ $path }} {{ end }}"
`,
	}), nil)
	objs := mustRender(t, Request{
		Root: root, Path: "", Type: syncv1.RenderHelm, Application: "shop", Decryptor: &testDecryptor{},
		Helm: HelmOptions{
			ReleaseName: "store", Namespace: "prod", KubeVersion: "v1.31.4",
			Values: map[string]any{"sidecar": map[string]any{"enabled": true}},
		},
	})
	find(t, objs, "ConfigMap", "sidecar")
	names, _, _ := unstructuredInt(find(t, objs, "ConfigMap", "files").Object, "data", "names")
	if s, _ := names.(string); !strings.Contains(s, "files/kept.txt") || strings.Contains(s, ".git") || strings.Contains(s, "ignored/") {
		t.Errorf("chart files = %q, want files/kept.txt without .git or .helmignore'd files", names)
	}
	deploy := find(t, objs, "Deployment", "store-web")
	if v := deploy.GetAnnotations()["kube-version"]; v != "v1.31.4" {
		t.Errorf(".Capabilities.KubeVersion = %q, want the requested v1.31.4", v)
	}
}

func TestRender_Helm_ChartFromARepositoryIsNotModified(t *testing.T) {
	files := webChart(t)
	var buffered []*loader.BufferedFile
	for name, data := range files {
		buffered = append(buffered, &loader.BufferedFile{Name: name, Data: []byte(data)})
	}
	pulled, err := loader.LoadFiles(buffered)
	if err != nil {
		t.Fatal(err)
	}
	valuesBefore := deepCopyMap(pulled.Values)
	depsBefore := len(pulled.Dependencies())

	root, _ := newRepo(t, map[string]string{"envs/prod/values.yaml": encrypt("password: pulled-secret\n")}, nil)
	dec := &testDecryptor{}
	req := Request{
		Root: root, Path: "envs/prod", Type: syncv1.RenderHelm, Application: "shop", Decryptor: dec,
		Helm: HelmOptions{Chart: pulled, Namespace: "prod", ValuesFiles: []string{"values.yaml"}},
	}
	first := mustRender(t, req)
	second := mustRender(t, req)
	if !reflect.DeepEqual(ids(first), ids(second)) {
		t.Errorf("a second render of the same chart differs: %v, then %v", ids(first), ids(second))
	}
	if pw, _, _ := unstructuredInt(find(t, first, "Secret", "shop-web").Object, "stringData", "password"); pw != "pulled-secret" {
		t.Errorf("password = %v", pw)
	}
	if !reflect.DeepEqual(pulled.Values, valuesBefore) || len(pulled.Dependencies()) != depsBefore {
		t.Error("Render modified the chart it was given")
	}
	assertEqual(t, "files given to the Decryptor", dec.seenPaths(), []string{"envs/prod/values.yaml"})
}

func TestRender_Helm_SchemaIsValidatedWithoutFetchingAnything(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte(`{"type": "string"}`))
	}))
	defer srv.Close()

	tests := []struct {
		name   string
		schema string
		values map[string]any
		reason string
		wants  []string
	}{
		{
			name:   "values that match",
			schema: `{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": {"replicaCount": {"type": "integer", "minimum": 1}}}`,
			values: map[string]any{"replicaCount": 3},
		},
		{
			name:   "values that do not match",
			schema: `{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": {"replicaCount": {"type": "integer", "minimum": 1}}}`,
			values: map[string]any{"replicaCount": 0},
			reason: syncv1.ReasonValidationFailure,
			wants:  []string{"web/values.schema.json: validating values against the chart's schema: web:", "replicaCount"},
		},
		{
			name:   "remote $ref",
			schema: `{"type": "object", "properties": {"image": {"$ref": "` + srv.URL + `/schema.json"}}}`,
			reason: syncv1.ReasonValidationFailure,
			wants:  []string{"values.schema.json cannot be used (documents outside it are never loaded)", srv.URL},
		},
		{
			name:   "local file $ref",
			schema: `{"type": "object", "properties": {"image": {"$ref": "file:///etc/hostname"}}}`,
			reason: syncv1.ReasonValidationFailure,
			wants:  []string{"values.schema.json cannot be used (documents outside it are never loaded)", "file:///etc/hostname"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, _ := newRepo(t, under("web", merge(webChart(t), map[string]string{"values.schema.json": tt.schema})), nil)
			req := Request{
				Root: root, Path: "web", Type: syncv1.RenderHelm, Application: "shop", Decryptor: &testDecryptor{},
				Helm: HelmOptions{Namespace: "prod", Values: tt.values},
			}
			if tt.reason == "" {
				mustRender(t, req)
				return
			}
			renderErr(t, req, tt.reason, tt.wants...)
		})
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("schema validation fetched a URL %d times", n)
	}
}

func TestRender_Helm_RefusesHostileInput(t *testing.T) {
	outside := map[string]string{
		"outside/values.yaml":    "password: stolen\n",
		"outside/templates.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: stolen}\n",
	}
	tests := []struct {
		name        string
		files       map[string]string
		valuesFiles []string
		valuesFrom  []map[string]any
		kubeVersion string
		app         string
		dec         *testDecryptor
		reason      string
		wants       []string
	}{
		{
			name:        "valuesFile symlink leaving the repository",
			files:       map[string]string{"web/leak.yaml": symlinkPrefix + "../../outside/values.yaml"},
			valuesFiles: []string{"leak.yaml"},
			reason:      syncv1.ReasonValidationFailure,
			wants:       []string{"web/leak.yaml: symlink leads outside the repository"},
		},
		{
			name:        "valuesFile with ..",
			valuesFiles: []string{"../../outside/values.yaml"},
			reason:      syncv1.ReasonValidationFailure,
			wants:       []string{"../../outside/values.yaml: valuesFiles entry must not contain '..'"},
		},
		{
			name:        "absolute valuesFile",
			valuesFiles: []string{"/etc/hostname"},
			reason:      syncv1.ReasonValidationFailure,
			wants:       []string{"/etc/hostname: valuesFiles entry must be a relative path"},
		},
		{
			name:        "missing valuesFile",
			valuesFiles: []string{"nope.yaml"},
			reason:      syncv1.ReasonRenderFailed,
			wants:       []string{"web/nope.yaml: values file does not exist"},
		},
		{
			name:        "malformed valuesFile",
			files:       map[string]string{"web/bad.yaml": "a: [unclosed\n"},
			valuesFiles: []string{"bad.yaml"},
			reason:      syncv1.ReasonRenderFailed,
			wants:       []string{"web/bad.yaml: values file is not valid YAML"},
		},
		{
			name:        "encrypted valuesFile without keys",
			files:       map[string]string{"web/secrets.yaml": encrypt("password: x\n")},
			valuesFiles: []string{"secrets.yaml"},
			dec:         &testDecryptor{refuse: true},
			reason:      syncv1.ReasonDecryptionFailed,
			wants:       []string{"web/secrets.yaml: file is encrypted and the Application has no decryption keys"},
		},
		{
			name:   "chart template symlink leaving the repository",
			files:  map[string]string{"web/templates/leak.yaml": symlinkPrefix + "../../../outside/templates.yaml"},
			reason: syncv1.ReasonValidationFailure,
			wants:  []string{"web/templates/leak.yaml: symlink leads outside the repository"},
		},
		{
			name:   "template rendering an object without a name",
			files:  map[string]string{"web/templates/bad.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.missing }}\n"},
			reason: syncv1.ReasonValidationFailure,
			wants:  []string{"web/templates/bad.yaml: document 1 (a ConfigMap) has no metadata.name"},
		},
		{
			name:   "template rendering malformed YAML",
			files:  map[string]string{"web/templates/bad.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x\n"},
			reason: syncv1.ReasonRenderFailed,
			wants:  []string{"web/templates/bad.yaml: document 1 is not valid YAML"},
		},
		{
			name:   "two templates rendering the same object",
			files:  map[string]string{"web/templates/again.yaml": "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\n"},
			reason: syncv1.ReasonValidationFailure,
			wants:  []string{"web/templates/migrate.yaml: document 1 defines Job.batch migrate, already defined by web/templates/again.yaml (document 1)"},
		},
		{
			name:       "template error quoting a valuesFrom value",
			files:      map[string]string{"web/templates/fail.yaml": `{{ fail (printf "bad token %s" .Values.token) }}`},
			valuesFrom: []map[string]any{{"token": "value-from-a-secret"}},
			reason:     syncv1.ReasonRenderFailed,
			wants:      []string{"web: rendering templates", "bad token [redacted]"},
		},
		{
			name:   "release name Helm refuses",
			app:    strings.Repeat("a", 60),
			reason: syncv1.ReasonValidationFailure,
			wants:  []string{"helm release name"},
		},
		{
			name:        "unparseable kubeVersion",
			kubeVersion: "latest",
			reason:      syncv1.ReasonValidationFailure,
			wants:       []string{`kubeVersion "latest"`},
		},
		{
			name:   "empty Chart.yaml",
			files:  map[string]string{"web/Chart.yaml": ""},
			reason: syncv1.ReasonRenderFailed,
			wants:  []string{"web: loading chart"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, _ := newRepo(t, merge(under("web", webChart(t)), tt.files), outside)
			dec := tt.dec
			if dec == nil {
				dec = &testDecryptor{}
			}
			app := tt.app
			if app == "" {
				app = "shop"
			}
			e := renderErr(t, Request{
				Root: root, Path: "web", Type: syncv1.RenderHelm, Application: app, Decryptor: dec,
				Helm: HelmOptions{Namespace: "prod", ValuesFiles: tt.valuesFiles, ValuesFrom: tt.valuesFrom, KubeVersion: tt.kubeVersion},
			}, tt.reason, tt.wants...)
			for _, leak := range []string{"stolen", "value-from-a-secret", root} {
				if strings.Contains(e.Error(), leak) {
					t.Errorf("error %q contains %q", e, leak)
				}
			}
		})
	}
}

func TestRender_Helm_RefusesSubchartArchiveUnpackingPastTheLimit(t *testing.T) {
	// A small archive holding a large file of zeros.
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(zw)
	size := int64(MaxInputBytes + 1)
	if err := tw.WriteHeader(&tar.Header{Name: "bomb/templates/zeros.yaml", Mode: 0o644, Size: size, Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 1<<20)
	for written := int64(0); written < size; {
		n := min(int64(len(chunk)), size-written)
		if _, err := tw.Write(chunk[:n]); err != nil {
			t.Fatal(err)
		}
		written += n
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if buf.Len() > 1<<20 {
		t.Fatalf("archive is %d bytes; the point is a small one", buf.Len())
	}

	root, _ := newRepo(t, merge(under("web", webChart(t)), map[string]string{"web/charts/bomb-1.0.0.tgz": buf.String()}), nil)
	renderErr(t, Request{
		Root: root, Path: "web", Type: syncv1.RenderHelm, Application: "shop", Decryptor: &testDecryptor{},
		Helm: HelmOptions{Namespace: "prod"},
	}, syncv1.ReasonRenderFailed, "web: charts/bomb-1.0.0.tgz: unpacking it takes the render past 67108864 bytes of input")
}

func TestRender_Helm_PulledChartPastTheLimitIsRefused(t *testing.T) {
	pulled := &chart.Chart{
		Metadata: &chart.Metadata{APIVersion: "v2", Name: "huge", Version: "1.0.0"},
		Raw:      []*chart.File{{Name: "Chart.yaml", Data: make([]byte, MaxInputBytes+1)}},
	}
	root, _ := newRepo(t, map[string]string{"envs/.keep": ""}, nil)
	renderErr(t, Request{
		Root: root, Path: "envs", Type: syncv1.RenderHelm, Application: "shop", Decryptor: &testDecryptor{},
		Helm: HelmOptions{Chart: pulled, Namespace: "prod"},
	}, syncv1.ReasonRenderFailed, "chart huge: reading it takes the render past 67108864 bytes of input")
}
