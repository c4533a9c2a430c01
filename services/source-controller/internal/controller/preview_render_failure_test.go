package controller_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	testgit "github.com/kuvryn/kuvryn-sync/pkg/testkit/git"
)

// TestPreview_RenderFailureIsAPreviewRevision: a pull request that breaks
// an Application's manifests gets a preview Revision without desired
// state whose spec.renderFailure says why, as a desired render failure
// does, so the plan can say so; the Application's desired state is
// untouched.
func TestPreview_RenderFailureIsAPreviewRevision(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	gitRepo, repo := previewRepository(t, ns, "web")
	var desired string
	eventually(t, "a desired Revision", func() bool {
		desired = get(t, &syncv1.Application{}, ns, "web").Status.DesiredRevision
		return desired != ""
	})
	enablePreviews(t, ns, repo.Name, syncv1.PreviewsSpec{PullRequests: syncv1.PreviewProviderGitHub, MaxActive: 10})
	head, err := gitRepo.Apply("broken", "break web", testgit.File("apps/web/broken.yaml", "kind: [unclosed\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := gitRepo.SetRef("refs/pull/4/head", head); err != nil {
		t.Fatal(err)
	}
	requestPreview(t, ns, repo.Name, "pr-4", syncv1.PreviewRequest{Number: 4, Branch: "broken"})

	p := previewRendered(t, ns, repo.Name, "pr-4", head)
	if !strings.Contains(p.Message, "1 Applications rendered, 1 of them failed to render") {
		t.Fatalf("status.previews message %q", p.Message)
	}
	revs := previewRevisions(t, ns, "pr-4")
	if len(revs) != 1 {
		t.Fatalf("%d preview Revisions, want the render failure's", len(revs))
	}
	rev := revs[0]
	if rev.Spec.DesiredState.SecretName != "" || rev.Spec.Preview == nil || rev.Spec.Preview.Commit != head ||
		rev.Spec.Source == nil || rev.Spec.Source.Commit != head {
		t.Fatalf("render failure Revision spec %+v", rev.Spec)
	}
	if f := rev.Spec.RenderFailure; f == nil || f.Reason != syncv1.ReasonRenderFailed || !strings.Contains(f.Message, "apps/web/broken.yaml") {
		t.Fatalf("spec.renderFailure %+v, want RenderFailed naming apps/web/broken.yaml", f)
	}
	if !equality.Semantic.DeepEqual(rev.Status, syncv1.RevisionStatus{}) {
		t.Fatalf("the source-controller wrote status %+v on a preview Revision; the sync-controller owns it", rev.Status)
	}
	if got := get(t, &syncv1.Application{}, ns, "web").Status.DesiredRevision; got != desired {
		t.Fatalf("web's desiredRevision moved to %s", got)
	}
}
