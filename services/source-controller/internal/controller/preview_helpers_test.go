package controller_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/desiredstate"
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

// openPullRequest commits change on branch, points refs/pull/<n>/head at
// it, requests the preview pr-<n> and waits for it to be rendered; it
// returns the commit.
func openPullRequest(t *testing.T, gitRepo *testgit.Repo, ns string, n int32, branch string, change testgit.Change) string {
	t.Helper()
	head, err := gitRepo.Apply(branch, "change on "+branch, change)
	if err != nil {
		t.Fatal(err)
	}
	if err := gitRepo.SetRef(fmt.Sprintf("refs/pull/%d/head", n), head); err != nil {
		t.Fatal(err)
	}
	name := syncv1.PullRequestPreviewName(syncv1.PreviewProviderGitHub, n)
	requestPreview(t, ns, "platform", name, syncv1.PreviewRequest{Number: n, Branch: branch})
	previewRendered(t, ns, "platform", name, head)
	return head
}

// onlyPreviewRevision checks that the preview has one Revision, which
// withheld what is wanted, and returns its desired state.
func onlyPreviewRevision(t *testing.T, ns, preview string, wantWithheld []string) []*unstructured.Unstructured {
	t.Helper()
	revs := previewRevisions(t, ns, preview)
	if len(revs) != 1 {
		t.Fatalf("%d preview Revisions, want 1", len(revs))
	}
	if got := revs[0].Spec.Preview.Withheld; !slices.Equal(got, wantWithheld) {
		t.Fatalf("spec.preview.withheld = %q, want %q", got, wantWithheld)
	}
	state := get(t, &corev1.Secret{}, ns, revs[0].Spec.DesiredState.SecretName)
	objs, err := desiredstate.Decode(state.Data[desiredstate.DataKey])
	if err != nil {
		t.Fatal(err)
	}
	return objs
}
