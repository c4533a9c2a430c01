package controller_test

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	testgit "github.com/kuvryn/kuvryn-sync/pkg/testkit/git"
	testregistry "github.com/kuvryn/kuvryn-sync/pkg/testkit/registry"
)

// TestPreview_PrivateChartCredentialsWithheldUnlessDecrypt: a preview pulls
// a chart without its credentials unless spec.previews.decrypt says so; a
// chart that needs them then fails to render, saying why.
func TestPreview_PrivateChartCredentialsWithheldUnlessDecrypt(t *testing.T) {
	t.Parallel()
	host := testregistry.Start(t, testregistry.Options{Username: "puller", Password: "chart-s3cret"})
	pushChart(t, host, "demo", "1.0.0", packageDemoChart(t, "1.0.0"))
	const withheld = `spec.source.render.helm.chart.secretRef: Secret "chart-creds" not read (spec.previews.decrypt is off)`
	for _, tc := range []struct {
		name     string
		decrypt  bool
		rendered bool
	}{
		{"withheld without decrypt", false, false},
		{"used with decrypt", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := newNamespace(t)
			gitRepo, repo := newRepository(t, ns, "platform", map[string]string{"envs/prod/values.yaml": "color: blue\n"})
			app := demoChartApplication(ns, host.ChartRepository())
			app.Spec.Source.Render.Helm.Chart.SecretRef = &syncv1.LocalObjectReference{Name: "chart-creds"}
			for _, obj := range []client.Object{
				&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "chart-creds"},
					Data: map[string][]byte{"username": []byte("puller"), "password": []byte("chart-s3cret")}},
				app,
			} {
				if err := k8s.Create(t.Context(), obj); err != nil {
					t.Fatal(err)
				}
			}
			renderedSettings(t, ns, "demo", "")
			enablePreviews(t, ns, repo.Name, syncv1.PreviewsSpec{PullRequests: syncv1.PreviewProviderGitHub, MaxActive: 10, Decrypt: tc.decrypt})
			openPullRequest(t, gitRepo, ns, 3, "green", testgit.File("envs/prod/values.yaml", "color: green\n"))

			revs := previewRevisions(t, ns, "pr-3")
			if len(revs) != 1 {
				t.Fatalf("%d preview Revisions, want 1", len(revs))
			}
			rev := revs[0]
			if tc.rendered {
				if rev.Spec.DesiredState.SecretName == "" || len(rev.Spec.Preview.Withheld) != 0 {
					t.Fatalf("preview with decrypt: desired state %+v, withheld %q", rev.Spec.DesiredState, rev.Spec.Preview.Withheld)
				}
				return
			}
			if rev.Spec.DesiredState.SecretName != "" || !slices.Equal(rev.Spec.Preview.Withheld, []string{withheld}) {
				t.Fatalf("preview without decrypt: desired state %+v, withheld %q", rev.Spec.DesiredState, rev.Spec.Preview.Withheld)
			}
			if f := rev.Spec.RenderFailure; f == nil || !strings.Contains(f.Message, "pulled without credentials: "+withheld) {
				t.Fatalf("spec.renderFailure %+v, want one saying the credentials were withheld", f)
			}
		})
	}
}
