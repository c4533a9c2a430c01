package controller_test

import (
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	testgit "github.com/kuvryn/kuvryn-sync/pkg/testkit/git"
)

// TestPreview_RevisionsCarryTheRepositorysShard: a preview Revision is in
// the shard of its Repository, whose source-controller keeps and deletes it.
func TestPreview_RevisionsCarryTheRepositorysShard(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	gitRepo, repo := previewRepository(t, ns, "web")
	current := get(t, &syncv1.Repository{}, ns, repo.Name)
	patch := client.MergeFrom(current.DeepCopy())
	current.Labels = map[string]string{syncv1.ShardLabel: "a"}
	current.Spec.Previews = &syncv1.PreviewsSpec{PullRequests: syncv1.PreviewProviderGitHub, MaxActive: 10}
	if err := k8s.Patch(t.Context(), current, patch); err != nil {
		t.Fatal(err)
	}
	openPullRequest(t, gitRepo, ns, 8, "feature", testgit.File("apps/web/settings.yaml", strings.Replace(configMap, "%s", "green", 1)))
	revs := previewRevisions(t, ns, "pr-8")
	if len(revs) != 1 || revs[0].Labels[syncv1.ShardLabel] != "a" {
		t.Fatalf("preview Revisions %v, want one labelled with the Repository's shard a", revs)
	}
}
