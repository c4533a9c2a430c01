package controller_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// The guide: values merge, later winning, as the chart's defaults,
// valuesFiles, each valuesFrom entry in order (read from the Secrets and
// ConfigMaps of the Application's namespace), then values.
func TestHelmChart_ValuesFromASecretAndAConfigMapMergeInOrder(t *testing.T) {
	host := newOCIRegistry(t)
	pushChart(t, host, "demo", "1.0.0", packageDemoChart(t, "1.0.0"))
	ns := newNamespace(t)
	newRepository(t, ns, "platform", map[string]string{"envs/prod/values.yaml": "color: blue\nsize: large\n"})
	create := func(obj client.Object) {
		t.Helper()
		if err := k8s.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "demo-values"},
		Data: map[string][]byte{"values.yaml": []byte("size: from-secret\ntier: from-secret\n")}})
	create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "demo-tier"},
		Data: map[string]string{"tier.yaml": "tier: from-configmap\n"}})
	app := demoChartApplication(ns, host.ChartRepository(),
		syncv1.ValuesReference{Kind: "Secret", Name: "demo-values"},
		syncv1.ValuesReference{Kind: "ConfigMap", Name: "demo-tier", Key: "tier.yaml"})
	app.Spec.Source.Render.Helm.Values = &apiextensionsv1.JSON{Raw: []byte(`{"color":"green"}`)}
	create(app)

	_, data := renderedSettings(t, ns, "demo", "")
	for _, tc := range []struct{ key, want, from string }{
		{"color", "green", "values, over valuesFiles' blue and the chart's red"},
		{"size", "from-secret", "the Secret, over valuesFiles' large"},
		{"tier", "from-configmap", "the ConfigMap, the later valuesFrom entry, over the Secret"},
	} {
		if data[tc.key] != tc.want {
			t.Errorf("data.%s = %q, want %q from %s (all data: %v)", tc.key, data[tc.key], tc.want, tc.from, data)
		}
	}
}

// demoChartApplication renders the demo chart 1.0.0 of chartRepo with
// envs/prod/values.yaml of the Repository "platform" and valuesFrom.
func demoChartApplication(ns, chartRepo string, valuesFrom ...syncv1.ValuesReference) *syncv1.Application {
	return &syncv1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: ns},
		Spec: syncv1.ApplicationSpec{Source: syncv1.ApplicationSource{
			RepositoryRef: syncv1.LocalObjectReference{Name: "platform"},
			Path:          "envs/prod",
			Render: syncv1.Render{Type: syncv1.RenderHelm, Helm: &syncv1.HelmRender{
				Chart:       &syncv1.HelmChart{Repository: chartRepo, Name: "demo", Version: "1.0.0", Insecure: true},
				ValuesFiles: []string{"values.yaml"},
				ValuesFrom:  valuesFrom,
			}},
		}},
	}
}
