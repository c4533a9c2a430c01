package controller_test

import (
	"slices"
	"strings"
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	testgit "github.com/kuvryn/kuvryn-sync/pkg/testkit/git"
)

// TestPreview_BranchPatternsFoundOnPoll: for hosts without webhooks, each
// poll lists the branches matching spec.previews.branches and previews
// them; a branch deleted closes its preview.
func TestPreview_BranchPatternsFoundOnPoll(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	gitRepo, repo := previewRepository(t, ns, "web", "api")
	enablePreviews(t, ns, repo.Name, syncv1.PreviewsSpec{Branches: []string{"preview/*"}, MaxActive: 10})
	head, err := gitRepo.Apply("preview/green-api", "green api", testgit.File("apps/api/settings.yaml", strings.Replace(configMap, "%s", "green", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gitRepo.Apply("feature/ignored", "not previewed", testgit.File("apps/web/settings.yaml", strings.Replace(configMap, "%s", "green", 1))); err != nil {
		t.Fatal(err)
	}
	requestFetch(t, get(t, &syncv1.Repository{}, ns, repo.Name))

	name := syncv1.BranchPreviewName("preview/green-api")
	p := previewRendered(t, ns, repo.Name, name, head)
	if p.Ref != "refs/heads/preview/green-api" || p.Branch != "preview/green-api" || !slices.Equal(p.Applications, []string{"api"}) {
		t.Fatalf("status.previews entry %+v", p)
	}
	if n := len(get(t, &syncv1.Repository{}, ns, repo.Name).Status.Previews); n != 1 {
		t.Fatalf("%d previews, want only the branch matching preview/*", n)
	}
	if revs := previewRevisions(t, ns, name); len(revs) != 1 || revs[0].Spec.ApplicationName != "api" {
		t.Fatalf("preview Revisions %v, want one of api", revs)
	}

	if err := gitRepo.DeleteRef("refs/heads/preview/green-api"); err != nil {
		t.Fatal(err)
	}
	requestFetch(t, get(t, &syncv1.Repository{}, ns, repo.Name))
	eventually(t, "the deleted branch's preview closed", func() bool {
		p := previewStatus(t, ns, repo.Name, name)
		return p != nil && p.State == syncv1.PreviewClosed && p.ClosedAt != nil
	})
}
