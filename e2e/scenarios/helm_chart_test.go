package scenarios_test

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/e2e/harness"
)

// shopChart is a chart whose Deployment runs the image its values name and
// whose ConfigMap records the chart version and a greeting.
func shopChart(t *testing.T, version string) []byte {
	t.Helper()
	archive, err := harness.PackageChart(map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: shop\nversion: " + version + "\ntype: application\n",
		"values.yaml": "image: shop:1.0\ngreeting: hello\n",
		"templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: {{ .Release.Name }}}
spec:
  replicas: 1
  selector: {matchLabels: {app: {{ .Release.Name }}}}
  template:
    metadata: {labels: {app: {{ .Release.Name }}}}
    spec:
      containers: [{name: shop, image: {{ .Values.image | quote }}}]
`,
		"templates/configmap.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: {{ .Release.Name }}-settings}
data: {chartVersion: {{ .Chart.Version | quote }}, greeting: {{ .Values.greeting | quote }}}
`,
	})
	if err != nil {
		t.Fatal(err)
	}
	return archive
}

// TestE2E_HelmChartsFromOCIAndHelmRepositoriesDeployedHealthy: one chart
// version published to the in-memory OCI registry and the Helm repository
// on loopback; an Application per repository kind renders it with values
// from Git and from spec, rolls it out and becomes Healthy, and its
// Revision records the pulled archive's sha256.
func TestE2E_HelmChartsFromOCIAndHelmRepositoriesDeployedHealthy(t *testing.T) {
	t.Parallel()
	archive := shopChart(t, "1.2.0")
	sha, err := env.Charts.Publish(archive)
	if err != nil {
		t.Fatal(err)
	}
	ns := namespace(t, "e2e-helm")
	application := func(name, repository string) string {
		return fmt.Sprintf(`- metadata: {name: %s}
  spec:
    source:
      path: apps/shop
      render:
        type: helm
        helm:
          chart: {repository: %q, name: shop, version: 1.2.0, insecure: true}
          valuesFiles: [values-prod.yaml]
          values: {greeting: "from %s"}
    serviceAccountName: deployer
    sync: {automatic: true}
`, name, repository, name)
	}
	repository(t, ns, "platform", map[string]string{
		"apps/shop/values-prod.yaml": "image: shop:2.0\n",
		".ksync.yaml": "applications:\n" + application("shop-oci", env.Charts.OCIRepository()) +
			application("shop-http", env.Charts.HelmRepository()),
	})

	for _, tc := range []struct{ app, repository string }{
		{"shop-oci", env.Charts.OCIRepository()},
		{"shop-http", env.Charts.HelmRepository()},
	} {
		t.Run(tc.app, func(t *testing.T) {
			rev := get(t, &syncv1.Revision{}, ns, waitHealthy(t, ns, tc.app, ""))
			want := syncv1.ChartArtifact{Repository: tc.repository, Name: "shop", Version: "1.2.0", SHA256: sha}
			if s := rev.Spec.Source; s == nil || s.Chart == nil || *s.Chart != want {
				t.Errorf("Revision %s source %+v, want chart %+v", rev.Name, rev.Spec.Source, want)
			}
			d := get(t, &appsv1.Deployment{}, ns, tc.app)
			if img := d.Spec.Template.Spec.Containers[0].Image; img != "shop:2.0" || d.Status.ReadyReplicas != 1 {
				t.Errorf("Deployment %s runs %s with %d ready, want shop:2.0 from values-prod.yaml, ready", tc.app, img, d.Status.ReadyReplicas)
			}
			cm := get(t, &corev1.ConfigMap{}, ns, tc.app+"-settings")
			if cm.Data["chartVersion"] != "1.2.0" || cm.Data["greeting"] != "from "+tc.app {
				t.Errorf("ConfigMap %s-settings holds %v, want chart 1.2.0 and the greeting from spec values", tc.app, cm.Data)
			}
		})
	}
}
