package controller_test

import (
	"strings"
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	testgit "github.com/kuvryn/kuvryn-sync/pkg/testkit/git"
)

// TestPreview_RefBehindTheRequestedCommitIsFetchedAgainSoon: a Git host may
// send the pull request event before it moves refs/pull/<n>/head; the
// preview renders what the ref holds, says so, and fetches it again soon,
// well before the Repository's hour-long poll.
func TestPreview_RefBehindTheRequestedCommitIsFetchedAgainSoon(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	gitRepo, repo := previewRepository(t, ns, "web")
	enablePreviews(t, ns, repo.Name, syncv1.PreviewsSpec{PullRequests: syncv1.PreviewProviderGitHub, MaxActive: 10})
	first, err := gitRepo.Apply("feature", "green", testgit.File("apps/web/settings.yaml", strings.Replace(configMap, "%s", "green", 1)))
	if err != nil {
		t.Fatal(err)
	}
	second, err := gitRepo.Apply("feature", "yellow", testgit.File("apps/web/settings.yaml", strings.Replace(configMap, "%s", "yellow", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if err := gitRepo.SetRef("refs/pull/6/head", first); err != nil {
		t.Fatal(err)
	}
	requestPreview(t, ns, repo.Name, "pr-6", syncv1.PreviewRequest{Number: 6, Branch: "feature", Commit: second})
	p := previewRendered(t, ns, repo.Name, "pr-6", first)
	if !strings.Contains(p.Message, "not yet at the requested commit "+second[:12]) {
		t.Fatalf("status.previews message %q does not say the ref lags the request", p.Message)
	}

	if err := gitRepo.SetRef("refs/pull/6/head", second); err != nil {
		t.Fatal(err)
	}
	p = previewRendered(t, ns, repo.Name, "pr-6", second)
	if strings.Contains(p.Message, "not yet") {
		t.Fatalf("status.previews message %q once the ref caught up", p.Message)
	}
}
