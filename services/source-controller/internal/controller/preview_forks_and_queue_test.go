package controller_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	testgit "github.com/kuvryn/kuvryn-sync/pkg/testkit/git"
)

// TestPreview_ForkRefusedAndMaxActiveQueues: a fork's pull request is
// refused without forks: true, and past maxActive requests wait, oldest
// first, until an active preview closes.
func TestPreview_ForkRefusedAndMaxActiveQueues(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	gitRepo, repo := previewRepository(t, ns, "web")
	enablePreviews(t, ns, repo.Name, syncv1.PreviewsSpec{
		PullRequests: syncv1.PreviewProviderGitHub, MaxActive: 1,
		KeepAfterClose: &metav1.Duration{Duration: time.Hour},
	})
	head, err := gitRepo.Apply("feature", "green", testgit.File("apps/web/settings.yaml", strings.Replace(configMap, "%s", "green", 1)))
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"refs/pull/1/head", "refs/pull/2/head", "refs/pull/3/head"} {
		if err := gitRepo.SetRef(ref, head); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().Truncate(time.Second)
	requestPreview(t, ns, repo.Name, "pr-1", syncv1.PreviewRequest{Number: 1, Fork: true, At: metav1.NewTime(now)})
	requestPreview(t, ns, repo.Name, "pr-2", syncv1.PreviewRequest{Number: 2, At: metav1.NewTime(now.Add(time.Second))})
	requestPreview(t, ns, repo.Name, "pr-3", syncv1.PreviewRequest{Number: 3, At: metav1.NewTime(now.Add(2 * time.Second))})

	previewRendered(t, ns, repo.Name, "pr-2", head)
	fork := previewStatus(t, ns, repo.Name, "pr-1")
	if fork == nil || fork.State != syncv1.PreviewRefused || !fork.Fork ||
		fork.Message != "pull request 1 comes from a fork; set spec.previews.forks: true to preview forks" {
		t.Fatalf("fork's preview %+v, want Refused with the reason", fork)
	}
	if q := previewStatus(t, ns, repo.Name, "pr-3"); q == nil || q.State != syncv1.PreviewQueued {
		t.Fatalf("pr-3 %+v, want Queued behind maxActive 1", q)
	}
	if n := len(previewRevisions(t, ns, "pr-1")) + len(previewRevisions(t, ns, "pr-3")); n != 0 {
		t.Fatalf("%d Revisions of refused or queued previews", n)
	}

	requestPreview(t, ns, repo.Name, "pr-2", syncv1.PreviewRequest{Number: 2, Closed: true, At: metav1.NewTime(now.Add(3 * time.Second))})
	previewRendered(t, ns, repo.Name, "pr-3", head)
	if p := previewStatus(t, ns, repo.Name, "pr-2"); p == nil || p.State != syncv1.PreviewClosed || len(previewRevisions(t, ns, "pr-2")) != 1 {
		t.Fatalf("closed pr-2 %+v: want Closed, its Revision kept for keepAfterClose", p)
	}
}
