package controller_test

import (
	"os"
	"testing"

	helmchart "helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/desiredstate"
	testchart "github.com/kuvryn/kuvryn-sync/pkg/testkit/chart"
	testregistry "github.com/kuvryn/kuvryn-sync/pkg/testkit/registry"
)

// demoTemplate shows where each value came from and which chart version
// rendered it.
const demoTemplate = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-settings
data:
  color: {{ .Values.color }}
  size: {{ .Values.size }}
  tier: {{ .Values.tier }}
  chartVersion: {{ .Chart.Version }}
`

// demoDefaults are the chart's values.yaml.
const demoDefaults = "color: red\nsize: small\ntier: standard\n"

// packageDemoChart builds chart demo at version the way `helm package` does.
func packageDemoChart(t *testing.T, version string) []byte {
	t.Helper()
	ch := &helmchart.Chart{
		Metadata:  &helmchart.Metadata{APIVersion: helmchart.APIVersionV2, Name: "demo", Version: version, Type: "application"},
		Templates: []*helmchart.File{{Name: "templates/configmap.yaml", Data: []byte(demoTemplate)}},
		Raw:       []*helmchart.File{{Name: chartutil.ValuesfileName, Data: []byte(demoDefaults)}},
	}
	path, err := chartutil.Save(ch, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// newOCIRegistry serves an in-memory OCI registry on loopback for the
// test's lifetime.
func newOCIRegistry(t *testing.T) *testregistry.Registry {
	t.Helper()
	return testregistry.Start(t, testregistry.Options{})
}

// pushChart uploads archive as charts/<name>:<version>, as `helm push` does.
func pushChart(t *testing.T, r *testregistry.Registry, name, version string, archive []byte) {
	t.Helper()
	if err := r.PushChart(archive, name, version); err != nil {
		t.Fatal(err)
	}
}

// renderedSettings waits for the Application to render a Revision other
// than previous, and returns it with the data of its ConfigMap.
func renderedSettings(t *testing.T, ns, app, previous string) (*syncv1.Revision, map[string]string) {
	t.Helper()
	var name string
	eventually(t, "a new desired Revision", func() bool {
		name = get(t, &syncv1.Application{}, ns, app).Status.DesiredRevision
		return name != "" && name != previous
	})
	rev := get(t, &syncv1.Revision{}, ns, name)
	state := get(t, &corev1.Secret{}, ns, rev.Spec.DesiredState.SecretName)
	objs, err := desiredstate.Decode(state.Data[desiredstate.DataKey])
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 || objs[0].GetKind() != "ConfigMap" || objs[0].GetName() != app+"-settings" {
		t.Fatalf("Revision %s holds %v, want the chart's ConfigMap %s-settings", name, objs, app)
	}
	data, _, err := unstructured.NestedStringMap(objs[0].Object, "data")
	if err != nil {
		t.Fatal(err)
	}
	return rev, data
}

func TestHelmChart_VersionBumpRecordsNewSHA256(t *testing.T) {
	t.Parallel()
	host := newOCIRegistry(t)
	archives := map[string][]byte{}
	for _, version := range []string{"1.0.0", "1.1.0"} {
		archives[version] = packageDemoChart(t, version)
		pushChart(t, host, "demo", version, archives[version])
	}
	if testchart.SHA256(archives["1.0.0"]) == testchart.SHA256(archives["1.1.0"]) {
		t.Fatal("the two chart versions must differ")
	}

	ns := newNamespace(t)
	newRepository(t, ns, "platform", map[string]string{
		"envs/prod/values.yaml": "color: blue\nsize: large\n",
	})
	repository := host.ChartRepository()
	app := &syncv1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: ns},
		Spec: syncv1.ApplicationSpec{Source: syncv1.ApplicationSource{
			RepositoryRef: syncv1.LocalObjectReference{Name: "platform"},
			Path:          "envs/prod",
			Render: syncv1.Render{Type: syncv1.RenderHelm, Helm: &syncv1.HelmRender{
				Chart:       &syncv1.HelmChart{Repository: repository, Name: "demo", Version: "1.0.0", Insecure: true},
				ValuesFiles: []string{"values.yaml"},
				Values:      &apiextensionsv1.JSON{Raw: []byte(`{"color":"green"}`)},
			}},
		}},
	}
	if err := k8s.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}

	first, data := renderedSettings(t, ns, "demo", "")
	// Chart defaults < valuesFiles < values.
	want := map[string]string{"color": "green", "size": "large", "tier": "standard", "chartVersion": "1.0.0"}
	for k, v := range want {
		if data[k] != v {
			t.Errorf("data.%s = %q, want %q (all data: %v)", k, data[k], v, data)
		}
	}
	wantChart := syncv1.ChartArtifact{Repository: repository, Name: "demo", Version: "1.0.0", SHA256: testchart.SHA256(archives["1.0.0"])}
	if c := first.Spec.Source; c == nil || c.Chart == nil || *c.Chart != wantChart {
		t.Fatalf("Revision %s source %+v, want chart %+v", first.Name, first.Spec.Source, wantChart)
	}

	patch := client.MergeFrom(app.DeepCopy())
	app.Spec.Source.Render.Helm.Chart.Version = "1.1.0"
	if err := k8s.Patch(t.Context(), app, patch); err != nil {
		t.Fatal(err)
	}
	second, data := renderedSettings(t, ns, "demo", first.Name)
	if data["chartVersion"] != "1.1.0" || data["color"] != "green" {
		t.Errorf("after the bump the ConfigMap holds %v, want chartVersion 1.1.0 and color green", data)
	}
	wantChart.Version, wantChart.SHA256 = "1.1.0", testchart.SHA256(archives["1.1.0"])
	if c := second.Spec.Source; c == nil || c.Chart == nil || *c.Chart != wantChart {
		t.Fatalf("Revision %s source %+v, want chart %+v", second.Name, second.Spec.Source, wantChart)
	}
	if n := len(revisionsOf(t, ns, "demo")); n != 2 {
		t.Fatalf("%d Revisions after one version bump, want 2", n)
	}
	if prev := get(t, &syncv1.Revision{}, ns, first.Name); prev.Spec.Source.Chart.SHA256 != testchart.SHA256(archives["1.0.0"]) {
		t.Fatalf("the bump rewrote the 1.0.0 Revision's chart sha256 to %s", prev.Spec.Source.Chart.SHA256)
	}
}
