package render

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// Templates that loop, allocate, recurse or print without end are stopped
// in their child process and refused naming the chart and the limit; the
// test process itself surviving the recursion entries is part of the check
// (in-process, a recursive tpl aborts the Go runtime). Templates reaching
// for the cluster, DNS, the environment or files outside the chart get
// nothing.
func TestRender_Helm_TemplatesAreBoundedAndReachNothing(t *testing.T) {
	limits := HelmOptions{Namespace: "prod", MaxOutputBytes: 1 << 20, MaxMemoryBytes: 256 << 20}
	configMap := func(data string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: probe\ndata:\n" + data
	}
	for _, tc := range []struct {
		name     string
		template string
		values   string
		reason   string
		wants    []string
		// timeout is the render time limit. The cases of templates that
		// end on another limit get a minute, so that a busy machine hits
		// that limit first and not the clock.
		timeout time.Duration
		// data is what the allowed templates put in the probe ConfigMap.
		data map[string]string
	}{
		{
			name:     "nested loops without end",
			template: `{{ range until 1000000 }}{{ range until 1000000 }}{{ end }}{{ end }}`,
			reason:   syncv1.ReasonRenderFailed,
			wants:    []string{"web: rendering templates took longer than the 3s limit; refusing it"},
			timeout:  3 * time.Second,
		},
		{
			name:     "include nesting exponentially",
			template: `{{ define "web.twice" }}{{ if lt . 60 }}{{ include "web.twice" (add1 .) }}{{ include "web.twice" (add1 .) }}{{ end }}{{ end }}{{ include "web.twice" 0 }}`,
			reason:   syncv1.ReasonRenderFailed,
			wants:    []string{"web: rendering templates took longer than the 3s limit"},
			timeout:  3 * time.Second,
		},
		{
			name:     "include recursing for ever (Helm stops it at 1000)",
			template: `{{ define "web.self" }}{{ include "web.self" . }}{{ end }}{{ include "web.self" . }}`,
			reason:   syncv1.ReasonRenderFailed,
			wants:    []string{`web: rendering templates: template: web/templates/x.yaml:1:61: executing "web/templates/x.yaml" at <include "web.self" .>: error calling include: … 1001 nested calls … rendering template has a nested reference name: web.self`},
		},
		{
			name:     "tpl recursing for ever",
			template: `{{ tpl .Values.self . }}`,
			values:   `self: "{{ tpl .Values.self . }}"`,
			reason:   syncv1.ReasonRenderFailed,
			wants:    []string{"web: rendering templates: they "},
		},
		{
			name:     "allocation past the memory limit",
			template: `{{ $n := until 1000000000 }}{{ len $n }}`,
			reason:   syncv1.ReasonRenderFailed,
			wants:    []string{"web: rendering templates: they need more than the 268435456 byte memory limit; refusing them"},
		},
		{
			name:     "output past the output limit",
			template: `{{ range until 300 }}{{ "x" | repeat 10000 }}{{ end }}`,
			reason:   syncv1.ReasonRenderFailed,
			wants:    []string{"web: rendering templates: the output exceeds the 1048576 byte limit; refusing it"},
		},
		{
			name:     "env is not a function",
			template: `{{ env "HOME" }}`,
			reason:   syncv1.ReasonRenderFailed,
			wants:    []string{`function "env" not defined`},
		},
		{
			name: "allowed: files outside the chart, lookup and DNS give nothing",
			template: configMap(`  passwd: {{ .Files.Get "../../etc/passwd" | quote }}
  abs: {{ .Files.Get "/etc/hostname" | quote }}
  lookup: {{ lookup "v1" "Secret" "kube-system" "" | len | quote }}
  dns: {{ getHostByName "localhost" | quote }}
`),
			data: map[string]string{"passwd": "", "abs": "", "lookup": "0", "dns": ""},
		},
		{
			name:     "allowed: a loop and an output of moderate size",
			template: configMap(`  big: {{ range until 1000 }}{{ "x" | repeat 100 }}{{ end }}` + "\n"),
			data:     map[string]string{"big": strings.Repeat("x", 100000)},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{
				"web/Chart.yaml":          "apiVersion: v2\nname: web\nversion: 1.0.0\n",
				"web/values.yaml":         tc.values,
				"web/templates/x.yaml":    tc.template,
				"web/templates/_h.tpl":    `{{- define "web.unused" -}}{{- end -}}`,
				"web/templates/NOTES.txt": "notes",
			}
			root, _ := newRepo(t, files, nil)
			helm := limits
			if helm.Timeout = tc.timeout; helm.Timeout == 0 {
				helm.Timeout = time.Minute
			}
			req := Request{Root: root, Path: "web", Type: syncv1.RenderHelm, Application: "shop", Decryptor: &testDecryptor{}, Helm: helm}
			if tc.data == nil {
				renderErr(t, req, tc.reason, tc.wants...)
				return
			}
			objs := mustRender(t, req)
			if len(objs) != 1 {
				t.Fatalf("rendered %d objects, want the probe ConfigMap", len(objs))
			}
			for key, want := range tc.data {
				got, _, _ := unstructured.NestedString(objs[0].Object, "data", key)
				if got != want {
					t.Errorf("data.%s = %.80q, want %.80q", key, got, want)
				}
			}
		})
	}
}
