package controller_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	testgit "github.com/kuvryn/kuvryn-sync/pkg/testkit/git"
)

// TestPreview_ValuesFromSecretWithheldUnlessDecrypt: a preview reads no
// valuesFrom Secret unless spec.previews.decrypt says so, and says so.
func TestPreview_ValuesFromSecretWithheldUnlessDecrypt(t *testing.T) {
	t.Parallel()
	host := newOCIRegistry(t)
	pushChart(t, host, "demo", "1.0.0", packageDemoChart(t, "1.0.0"))
	for _, tc := range []struct {
		name         string
		decrypt      bool
		wantSize     string
		wantWithheld []string
	}{
		{"withheld without decrypt", false, "large", []string{`spec.source.render.helm.valuesFrom[0]: Secret "demo-values" not read (spec.previews.decrypt is off)`}},
		{"read with decrypt", true, "from-secret", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := newNamespace(t)
			gitRepo, repo := newRepository(t, ns, "platform", map[string]string{"envs/prod/values.yaml": "color: blue\nsize: large\n"})
			for _, obj := range []client.Object{
				&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "demo-values"},
					Data: map[string][]byte{"values.yaml": []byte("size: from-secret\n")}},
				demoChartApplication(ns, host.ChartRepository(), syncv1.ValuesReference{Kind: "Secret", Name: "demo-values"}),
			} {
				if err := k8s.Create(t.Context(), obj); err != nil {
					t.Fatal(err)
				}
			}
			renderedSettings(t, ns, "demo", "")
			enablePreviews(t, ns, repo.Name, syncv1.PreviewsSpec{PullRequests: syncv1.PreviewProviderGitHub, MaxActive: 10, Decrypt: tc.decrypt})
			openPullRequest(t, gitRepo, ns, 2, "green", testgit.File("envs/prod/values.yaml", "color: green\nsize: large\n"))
			objs := onlyPreviewRevision(t, ns, "pr-2", tc.wantWithheld)
			if len(objs) != 1 {
				t.Fatalf("preview desired state holds %d objects, want the chart's ConfigMap", len(objs))
			}
			data, _, _ := unstructured.NestedStringMap(objs[0].Object, "data")
			if data["color"] != "green" || data["size"] != tc.wantSize {
				t.Fatalf("preview rendered %v, want color green and size %s", data, tc.wantSize)
			}
		})
	}
}
