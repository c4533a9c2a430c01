package controller_test

import (
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	testgit "github.com/kuvryn/kuvryn-sync/pkg/testkit/git"
)

// TestPreview_TurningPreviewsOffDeletesThem: removing spec.previews empties
// status.previews and deletes every preview Revision of the Repository,
// and only those.
func TestPreview_TurningPreviewsOffDeletesThem(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	gitRepo, repo := previewRepository(t, ns, "web")
	eventually(t, "a desired Revision", func() bool {
		return get(t, &syncv1.Application{}, ns, "web").Status.DesiredRevision != ""
	})
	enablePreviews(t, ns, repo.Name, syncv1.PreviewsSpec{PullRequests: syncv1.PreviewProviderGitHub, MaxActive: 10})
	openPullRequest(t, gitRepo, ns, 5, "feature", testgit.File("apps/web/settings.yaml", strings.Replace(configMap, "%s", "green", 1)))
	if n := len(previewRevisions(t, ns, "pr-5")); n != 1 {
		t.Fatalf("%d preview Revisions, want 1", n)
	}

	current := get(t, &syncv1.Repository{}, ns, repo.Name)
	patch := client.MergeFrom(current.DeepCopy())
	current.Spec.Previews = nil
	if err := k8s.Patch(t.Context(), current, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, "previews gone", func() bool {
		return len(get(t, &syncv1.Repository{}, ns, repo.Name).Status.Previews) == 0 && len(previewRevisions(t, ns, "pr-5")) == 0
	})
	desired := get(t, &syncv1.Application{}, ns, "web").Status.DesiredRevision
	if revs := revisionsOf(t, ns, "web"); len(revs) != 1 || revs[0].Name != desired {
		t.Fatalf("web's Revisions %v, want only its desired Revision %s", revs, desired)
	}
}
