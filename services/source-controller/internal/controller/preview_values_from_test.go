package controller_test

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/desiredstate"
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
				&syncv1.Application{
					ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: ns},
					Spec: syncv1.ApplicationSpec{Source: syncv1.ApplicationSource{
						RepositoryRef: syncv1.LocalObjectReference{Name: "platform"},
						Path:          "envs/prod",
						Render: syncv1.Render{Type: syncv1.RenderHelm, Helm: &syncv1.HelmRender{
							Chart:       &syncv1.HelmChart{Repository: host.ChartRepository(), Name: "demo", Version: "1.0.0", Insecure: true},
							ValuesFiles: []string{"values.yaml"},
							ValuesFrom:  []syncv1.ValuesReference{{Kind: "Secret", Name: "demo-values"}},
						}},
					}},
				},
			} {
				if err := k8s.Create(t.Context(), obj); err != nil {
					t.Fatal(err)
				}
			}
			renderedSettings(t, ns, "demo", "")
			enablePreviews(t, ns, repo.Name, syncv1.PreviewsSpec{PullRequests: syncv1.PreviewProviderGitHub, MaxActive: 10, Decrypt: tc.decrypt})
			head, err := gitRepo.Apply("green", "green", testgit.File("envs/prod/values.yaml", "color: green\nsize: large\n"))
			if err != nil {
				t.Fatal(err)
			}
			if err := gitRepo.SetRef("refs/pull/2/head", head); err != nil {
				t.Fatal(err)
			}
			requestPreview(t, ns, repo.Name, "pr-2", syncv1.PreviewRequest{Number: 2, Branch: "green"})
			previewRendered(t, ns, repo.Name, "pr-2", head)
			revs := previewRevisions(t, ns, "pr-2")
			if len(revs) != 1 {
				t.Fatalf("%d preview Revisions, want 1", len(revs))
			}
			if got := revs[0].Spec.Preview.Withheld; !slices.Equal(got, tc.wantWithheld) {
				t.Fatalf("spec.preview.withheld = %q, want %q", got, tc.wantWithheld)
			}
			state := get(t, &corev1.Secret{}, ns, revs[0].Spec.DesiredState.SecretName)
			objs, err := desiredstate.Decode(state.Data[desiredstate.DataKey])
			if err != nil || len(objs) != 1 {
				t.Fatalf("preview desired state %v, %v", objs, err)
			}
			data, _, _ := unstructured.NestedStringMap(objs[0].Object, "data")
			if data["color"] != "green" || data["size"] != tc.wantSize {
				t.Fatalf("preview rendered %v, want color green and size %s", data, tc.wantSize)
			}
		})
	}
}
