package controller_test

import (
	"archive/tar"
	"fmt"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/desiredstate"
	testchart "github.com/kuvryn/kuvryn-sync/pkg/testkit/chart"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/chart"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/render"
)

// hostileChart is one chart of the hostile table, served from the Helm
// repository or the OCI registry, and the refusal its Application must
// get; a case without reason is an allowed control whose probe ConfigMap
// must hold data.
type hostileChart struct {
	name, chart string
	oci         bool
	// archive is the chart as served; nil packages files.
	archive []byte
	files   map[string]string
	// index, when set, is served as the chart repository's index.yaml.
	index []byte
	// pulled marks a refusal as the chart is pulled: it is retried with
	// backoff, so it leaves no Revision, only the Application's condition.
	pulled bool
	reason string
	wants  []string
	data   map[string]string
}

// chartFiles is a chart named name whose one template is template, with
// values as its values.yaml.
func chartFiles(name, template, values string) map[string]string {
	return map[string]string{
		"Chart.yaml":          "apiVersion: v2\nname: " + name + "\nversion: 1.0.0\n",
		"values.yaml":         values,
		"templates/x.yaml":    template,
		"templates/_h.tpl":    `{{- define "h.unused" -}}{{- end -}}`,
		"templates/NOTES.txt": "notes",
	}
}

// probe is a ConfigMap template carrying data, for the allowed controls.
func probe(data string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-probe\ndata:\n" + data
}

// linkArchive is chart name whose archive holds entry besides Chart.yaml.
func linkArchive(t *testing.T, name string, entry tar.Header) []byte {
	t.Helper()
	archive, err := testchart.TarGz([]tar.Header{{Name: name + "/Chart.yaml", Typeflag: tar.TypeReg}, entry},
		map[string]string{name + "/Chart.yaml": "apiVersion: v2\nname: " + name + "\nversion: 1.0.0\n"})
	if err != nil {
		t.Fatal(err)
	}
	return archive
}

// checkPullRefused asserts that app's chart was refused as it was pulled:
// Rendered False with reason and a bounded message naming each of wants,
// retried, with a Warning Event, and no Revision or desired-state Secret.
func checkPullRefused(t *testing.T, ns, app, reason string, wants ...string) {
	t.Helper()
	checkMessage(t, renderedFalse(t, ns, app, reason).Message, append(wants, "; retrying in ")...)
	if revs := revisionsOf(t, ns, app); len(revs) != 0 {
		t.Fatalf("%d Revisions for a chart refused as it was pulled, want none", len(revs))
	}
	checkNoDesiredState(t, ns, app)
	var events corev1.EventList
	if err := k8s.List(t.Context(), &events, client.InNamespace(ns), client.MatchingFields{"involvedObject.name": app, "type": corev1.EventTypeWarning, "reason": reason}); err != nil {
		t.Fatal(err)
	}
	if len(events.Items) == 0 {
		t.Fatalf("no %s Warning Event for %s", reason, app)
	}
	checkMessage(t, events.Items[0].Message, wants...)
}

func TestHostileHelmChart_EveryChartIsRefusedAndNothingRenders(t *testing.T) {
	ns := newNamespace(t)
	// The lookup control reads a Secret that exists: an empty answer means
	// the template never reached the API server.
	marker := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "marker", Namespace: ns},
		StringData: map[string]string{"token": "kuvryn-marker-value"},
	}
	if err := k8s.Create(t.Context(), marker); err != nil {
		t.Fatal(err)
	}
	bomb, err := testchart.TarGz([]tar.Header{
		{Name: "bomb/Chart.yaml", Typeflag: tar.TypeReg},
		{Name: "bomb/files/zeros", Typeflag: tar.TypeReg},
	}, map[string]string{
		"bomb/Chart.yaml":  "apiVersion: v2\nname: bomb\nversion: 1.0.0\n",
		"bomb/files/zeros": string(make([]byte, chart.DefaultMaxUnpackedBytes+1)),
	})
	if err != nil {
		t.Fatal(err)
	}
	hugeIndex := []byte("apiVersion: v1\nentries: {}\npadding: " + strings.Repeat("x", int(chart.DefaultMaxIndexBytes)) + "\n")
	var aliasBomb strings.Builder
	aliasBomb.WriteString("apiVersion: v1\nentries: {}\nl0: &l0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 9; i++ {
		prev := "*l" + strconv.Itoa(i-1)
		fmt.Fprintf(&aliasBomb, "l%d: &l%d [%s%s]\n", i, i, strings.Repeat(prev+", ", 9), prev)
	}
	timeout := fmt.Sprintf("rendering templates took longer than the %s limit; refusing it", render.DefaultHelmTimeout)

	cases := []hostileChart{
		{
			name: "archive bomb", chart: "bomb", archive: bomb, pulled: true, reason: syncv1.ReasonRenderFailed,
			wants: []string{"chart bomb 1.0.0 from ", fmt.Sprintf("unpacks to more than %d bytes", chart.DefaultMaxUnpackedBytes)},
		},
		{
			name: "symlink out of the chart in the archive", chart: "link-out", oci: true, pulled: true,
			archive: linkArchive(t, "link-out", tar.Header{Name: "link-out/templates/passwd.yaml", Typeflag: tar.TypeSymlink, Linkname: "../../../../etc/passwd"}),
			reason:  syncv1.ReasonRenderFailed,
			wants:   []string{"chart link-out 1.0.0 from ", `archive entry "link-out/templates/passwd.yaml" is a symbolic link to "../../../../etc/passwd"`},
		},
		{
			name: "symlink inside the chart in the archive", chart: "link-in", pulled: true,
			archive: linkArchive(t, "link-in", tar.Header{Name: "link-in/values.yaml", Typeflag: tar.TypeSymlink, Linkname: "Chart.yaml"}),
			reason:  syncv1.ReasonRenderFailed,
			wants:   []string{"chart link-in 1.0.0 from ", `archive entry "link-in/values.yaml" is a symbolic link to "Chart.yaml"`},
		},
		{
			name: "huge index.yaml", chart: "huge-index", index: hugeIndex, pulled: true, reason: syncv1.ReasonRenderFailed,
			wants: []string{"fetching the index of chart repository", fmt.Sprintf("more than the %d byte limit", chart.DefaultMaxIndexBytes)},
		},
		{
			name: "index.yaml of aliases expanding to 10^9 strings", chart: "alias-index", index: []byte(aliasBomb.String()), pulled: true, reason: syncv1.ReasonRenderFailed,
			wants: []string{"index.yaml", "excessive aliasing"},
		},
		{
			name: "template looping without end", chart: "loop", oci: true,
			files:  chartFiles("loop", `{{ range until 1000000 }}{{ range until 1000000 }}{{ end }}{{ end }}`, ""),
			reason: syncv1.ReasonRenderFailed, wants: []string{"chart loop: " + timeout},
		},
		{
			name: "include nesting exponentially", chart: "twice",
			files:  chartFiles("twice", `{{ define "t" }}{{ if lt . 60 }}{{ include "t" (add1 .) }}{{ include "t" (add1 .) }}{{ end }}{{ end }}{{ include "t" 0 }}`, ""),
			reason: syncv1.ReasonRenderFailed, wants: []string{"chart twice: " + timeout},
		},
		{
			name: "include recursing for ever", chart: "self",
			files:  chartFiles("self", `{{ define "self" }}{{ include "self" . }}{{ end }}{{ include "self" . }}`, ""),
			reason: syncv1.ReasonRenderFailed, wants: []string{"chart self: rendering templates: ", "nested calls", "nested reference name: self"},
		},
		{
			name: "tpl recursing for ever (in-process it aborts the controller)", chart: "tpl", oci: true,
			files: chartFiles("tpl", `{{ tpl .Values.self . }}`, `self: "{{ tpl .Values.self . }}"`),
			// The stack limit stops it, or on a busy machine the 30s render
			// limit first; the render package's test pins the stack limit.
			reason: syncv1.ReasonRenderFailed, wants: []string{"chart tpl: rendering templates"},
		},
		{
			name: "env is not a function", chart: "env",
			files:  chartFiles("env", `{{ env "HOME" }}`, ""),
			reason: syncv1.ReasonRenderFailed, wants: []string{"chart env: rendering templates: ", `function "env" not defined`},
		},
	}
	controls := []hostileChart{
		{
			name: "allowed: files outside the chart, lookup and DNS give nothing", chart: "reach",
			files: chartFiles("reach", probe(`  passwd: {{ .Files.Get "../../etc/passwd" | quote }}
  abs: {{ .Files.Get "/etc/passwd" | quote }}
  lookup: {{ lookup "v1" "Secret" .Release.Namespace "marker" | len | quote }}
  dns: {{ getHostByName "localhost" | quote }}
`), ""),
			data: map[string]string{"passwd": "", "abs": "", "lookup": "0", "dns": ""},
		},
		{
			name: "allowed: a plain chart from the registry", chart: "plain", oci: true,
			files: chartFiles("plain", probe("  color: blue\n"), ""),
			data:  map[string]string{"color": "blue"},
		},
	}

	registry := newOCIRegistry(t)
	helmRepo := testchart.StartHelmRepository(false, nil)
	t.Cleanup(helmRepo.Close)
	newRepository(t, ns, "platform", map[string]string{"envs/README.md": "charts come from chart repositories\n"})
	all := append(append([]hostileChart{}, cases...), controls...)
	for _, tc := range all {
		archive := tc.archive
		if archive == nil && tc.files != nil {
			if archive, err = testchart.Package(tc.files); err != nil {
				t.Fatal(err)
			}
		}
		// Each chart has a repository of its own, so one chart's index.yaml
		// never stands in the way of another's.
		repository := helmRepo.URL() + "/" + tc.chart
		switch {
		case tc.index != nil:
			helmRepo.Serve("/"+tc.chart+"/index.yaml", tc.index)
		case tc.oci:
			pushChart(t, registry, tc.chart, "1.0.0", archive)
			repository = registry.ChartRepository()
		default:
			if err := helmRepo.Publish("/"+tc.chart, testchart.Entry{Name: tc.chart, Version: "1.0.0", URL: tc.chart + "-1.0.0.tgz", Archive: archive}); err != nil {
				t.Fatal(err)
			}
		}
		app := &syncv1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: tc.chart, Namespace: ns},
			Spec: syncv1.ApplicationSpec{Source: syncv1.ApplicationSource{
				RepositoryRef: syncv1.LocalObjectReference{Name: "platform"},
				Path:          "envs",
				Render: syncv1.Render{Type: syncv1.RenderHelm, Helm: &syncv1.HelmRender{
					Chart: &syncv1.HelmChart{Repository: repository, Name: tc.chart, Version: "1.0.0", Insecure: true},
				}},
			}},
		}
		if err := k8s.Create(t.Context(), app); err != nil {
			t.Fatal(err)
		}
	}

	var refused int
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.pulled {
				checkPullRefused(t, ns, tc.chart, tc.reason, tc.wants...)
			} else {
				checkRefused(t, ns, tc.chart, tc.reason, tc.wants...)
			}
			cond := meta.FindStatusCondition(get(t, &syncv1.Application{}, ns, tc.chart).Status.Conditions, syncv1.ConditionRendered)
			t.Logf("%s: %s", cond.Reason, cond.Message)
			refused++
		})
	}
	for _, tc := range controls {
		t.Run(tc.name, func(t *testing.T) {
			var name string
			eventually(t, "a desired Revision for "+tc.chart, func() bool {
				name = get(t, &syncv1.Application{}, ns, tc.chart).Status.DesiredRevision
				return name != ""
			})
			rev := get(t, &syncv1.Revision{}, ns, name)
			if rev.Spec.DesiredState.SecretName == "" {
				t.Fatalf("%s did not render: %+v", tc.chart, rev.Status.Conditions)
			}
			objs, err := desiredstate.Decode(get(t, &corev1.Secret{}, ns, rev.Spec.DesiredState.SecretName).Data[desiredstate.DataKey])
			if err != nil {
				t.Fatal(err)
			}
			if len(objs) != 1 || objs[0].GetName() != tc.chart+"-probe" {
				t.Fatalf("%s rendered %v, want its probe ConfigMap alone", tc.chart, objs)
			}
			for key, want := range tc.data {
				if got, _, _ := unstructured.NestedString(objs[0].Object, "data", key); got != want {
					t.Errorf("data.%s = %.80q, want %.80q", key, got, want)
				}
			}
		})
	}
	t.Logf("hostile Helm charts: %d inputs tried, %d refused, %d allowed controls", len(cases), refused, len(controls))
}
