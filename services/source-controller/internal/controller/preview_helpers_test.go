package controller_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	testgit "github.com/kuvryn/kuvryn-sync/pkg/testkit/git"
)

// previewRepository serves a repository "platform" holding, for each app,
// apps/<app>/settings.yaml, a ConfigMap whose color is blue, and creates
// the Applications.
func previewRepository(t *testing.T, ns string, apps ...string) (*testgit.Repo, *syncv1.Repository) {
	t.Helper()
	files := map[string]string{}
	for _, app := range apps {
		files["apps/"+app+"/settings.yaml"] = strings.Replace(configMap, "%s", "blue", 1)
	}
	gitRepo, repo := newRepository(t, ns, "platform", files)
	for _, app := range apps {
		newApplication(t, ns, app, repo.Name, "apps/"+app)
	}
	return gitRepo, repo
}

// enablePreviews sets spec.previews on a Repository newRepository made.
func enablePreviews(t *testing.T, ns, name string, previews syncv1.PreviewsSpec) {
	t.Helper()
	repo := get(t, &syncv1.Repository{}, ns, name)
	patch := client.MergeFrom(repo.DeepCopy())
	repo.Spec.Previews = &previews
	if err := k8s.Patch(t.Context(), repo, patch); err != nil {
		t.Fatal(err)
	}
}

// requestPreview stamps a preview request annotation, as the webhook
// receiver does for a pull request event.
func requestPreview(t *testing.T, ns, repoName, name string, req syncv1.PreviewRequest) {
	t.Helper()
	if req.At.IsZero() {
		req.At = metav1.NewTime(time.Now().Truncate(time.Second))
	}
	value, err := syncv1.MarshalPreviewRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	setAnnotation(t, ns, repoName, syncv1.PreviewRequestAnnotation(name), value)
}

func setAnnotation(t *testing.T, ns, repoName, key, value string) {
	t.Helper()
	repo := get(t, &syncv1.Repository{}, ns, repoName)
	patch := client.MergeFrom(repo.DeepCopy())
	if repo.Annotations == nil {
		repo.Annotations = map[string]string{}
	}
	repo.Annotations[key] = value
	if err := k8s.Patch(t.Context(), repo, patch); err != nil {
		t.Fatal(err)
	}
}

// previewStatus is the named entry of status.previews, or nil.
func previewStatus(t *testing.T, ns, repoName, name string) *syncv1.PreviewStatus {
	t.Helper()
	for _, p := range get(t, &syncv1.Repository{}, ns, repoName).Status.Previews {
		if p.Name == name {
			return &p
		}
	}
	return nil
}

// previewRevisions lists the Revisions labelled with a preview.
func previewRevisions(t *testing.T, ns, preview string) []syncv1.Revision {
	t.Helper()
	return revisionsLabelled(t, ns, syncv1.PreviewLabel, preview)
}

// previewRendered waits for the preview to be Rendered at commit and
// returns its entry.
func previewRendered(t *testing.T, ns, repoName, name, commit string) *syncv1.PreviewStatus {
	t.Helper()
	var p *syncv1.PreviewStatus
	eventually(t, "preview "+name+" rendered at "+commit, func() bool {
		p = previewStatus(t, ns, repoName, name)
		return p != nil && p.State == syncv1.PreviewRendered && p.Commit == commit
	})
	return p
}
