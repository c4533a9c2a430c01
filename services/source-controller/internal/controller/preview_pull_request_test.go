package controller_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/desiredstate"
	testgit "github.com/kuvryn/kuvryn-sync/pkg/testkit/git"
)

// TestPreview_PullRequestRendersOnlyTheChangedApplication walks one pull
// request through its life: opened, pushed to again, closed.
func TestPreview_PullRequestRendersOnlyTheChangedApplication(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	gitRepo, repo := previewRepository(t, ns, "web", "api")
	var desiredWeb, desiredAPI string
	eventually(t, "both Applications rendered", func() bool {
		desiredWeb = get(t, &syncv1.Application{}, ns, "web").Status.DesiredRevision
		desiredAPI = get(t, &syncv1.Application{}, ns, "api").Status.DesiredRevision
		return desiredWeb != "" && desiredAPI != ""
	})
	enablePreviews(t, ns, repo.Name, syncv1.PreviewsSpec{
		PullRequests: syncv1.PreviewProviderGitHub, MaxActive: 10,
		KeepAfterClose: &metav1.Duration{Duration: 3 * time.Second},
	})

	head, err := gitRepo.Apply("feature", "green web", testgit.File("apps/web/settings.yaml", strings.Replace(configMap, "%s", "green", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if err := gitRepo.SetRef("refs/pull/12/head", head); err != nil {
		t.Fatal(err)
	}
	requestPreview(t, ns, repo.Name, "pr-12", syncv1.PreviewRequest{Number: 12, Branch: "feature", Commit: head})

	p := previewRendered(t, ns, repo.Name, "pr-12", head)
	if p.Ref != "refs/pull/12/head" || p.Number != 12 || !slices.Equal(p.Applications, []string{"web"}) {
		t.Fatalf("status.previews entry %+v, want ref refs/pull/12/head, number 12, applications [web]", p)
	}
	revs := previewRevisions(t, ns, "pr-12")
	if len(revs) != 1 {
		t.Fatalf("%d preview Revisions, want 1 (only web changed)", len(revs))
	}
	first := checkPreviewRevision(t, &revs[0], "web", "pr-12", repo, head, "apps/web", "green")

	// A second push replaces the preview Revision of the older commit.
	second, err := gitRepo.Apply("feature", "yellow web", testgit.File("apps/web/settings.yaml", strings.Replace(configMap, "%s", "yellow", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if err := gitRepo.SetRef("refs/pull/12/head", second); err != nil {
		t.Fatal(err)
	}
	requestPreview(t, ns, repo.Name, "pr-12", syncv1.PreviewRequest{Number: 12, Branch: "feature", Commit: second,
		At: metav1.NewTime(time.Now().Add(time.Second).Truncate(time.Second))})
	previewRendered(t, ns, repo.Name, "pr-12", second)
	eventually(t, "the older commit's preview Revision deleted", func() bool {
		revs = previewRevisions(t, ns, "pr-12")
		return len(revs) == 1 && revs[0].Name != first.Name
	})
	checkPreviewRevision(t, &revs[0], "web", "pr-12", repo, second, "apps/web", "yellow")

	// Desired state never sees the preview.
	if got := get(t, &syncv1.Application{}, ns, "web").Status.DesiredRevision; got != desiredWeb {
		t.Fatalf("web's desiredRevision moved to %s during a preview", got)
	}
	if got := get(t, &syncv1.Application{}, ns, "api").Status.DesiredRevision; got != desiredAPI {
		t.Fatalf("api's desiredRevision moved to %s during a preview", got)
	}

	// Closing keeps the Revisions for keepAfterClose, then deletes them
	// and drops the entry.
	requestPreview(t, ns, repo.Name, "pr-12", syncv1.PreviewRequest{Number: 12, Branch: "feature", Closed: true,
		At: metav1.NewTime(time.Now().Add(2 * time.Second).Truncate(time.Second))})
	eventually(t, "pr-12 closed", func() bool {
		p := previewStatus(t, ns, repo.Name, "pr-12")
		return p != nil && p.State == syncv1.PreviewClosed && p.ClosedAt != nil
	})
	eventually(t, "pr-12's Revisions deleted and its entry dropped after keepAfterClose", func() bool {
		return len(previewRevisions(t, ns, "pr-12")) == 0 && previewStatus(t, ns, repo.Name, "pr-12") == nil
	})
	if n := len(revisionsOf(t, ns, "web")); n != 1 {
		t.Fatalf("web has %d Revisions after the preview closed, want its one desired Revision", n)
	}
}

// checkPreviewRevision checks a preview Revision's name, labels, owner,
// spec (rendered from path at commit) and desired-state Secret, and returns it.
func checkPreviewRevision(t *testing.T, rev *syncv1.Revision, app, preview string, repo *syncv1.Repository, commit, path, color string) *syncv1.Revision {
	t.Helper()
	repoNow := get(t, &syncv1.Repository{}, repo.Namespace, repo.Name)
	wantLabels := map[string]string{syncv1.PreviewLabel: preview, syncv1.RepositoryLabel: repo.Name, syncv1.ApplicationLabel: app}
	for k, v := range wantLabels {
		if rev.Labels[k] != v {
			t.Errorf("Revision %s label %s = %q, want %q", rev.Name, k, rev.Labels[k], v)
		}
	}
	if len(rev.OwnerReferences) != 1 || rev.OwnerReferences[0].Kind != "Repository" || rev.OwnerReferences[0].UID != repoNow.UID {
		t.Errorf("Revision %s owners %+v, want the Repository", rev.Name, rev.OwnerReferences)
	}
	pv := rev.Spec.Preview
	if rev.Spec.ApplicationName != app || pv == nil || pv.Name != preview || pv.Repository != repo.Name || pv.Commit != commit || pv.Ref == "" {
		t.Fatalf("Revision %s spec %+v preview %+v", rev.Name, rev.Spec, pv)
	}
	if want := desiredstate.PreviewRevisionName(app, preview, rev.Spec.DesiredState.Digest, commit); rev.Name != want {
		t.Errorf("Revision named %s, want %s", rev.Name, want)
	}
	if src := rev.Spec.Source; src == nil || src.Commit != commit || src.Path != path || src.RenderedAt.IsZero() {
		t.Errorf("Revision %s spec.source %+v, want commit %s, path %s and the render time", rev.Name, src, commit, path)
	}
	if rev.Status.Phase != "" || len(rev.Status.Conditions) != 0 {
		t.Errorf("the source-controller wrote status %+v on a rendered preview Revision", rev.Status)
	}
	secret := get(t, &corev1.Secret{}, rev.Namespace, rev.Spec.DesiredState.SecretName)
	if secret.Type != syncv1.DesiredStateSecretType || !metav1.IsControlledBy(secret, rev) ||
		secret.Labels[syncv1.PreviewLabel] != preview || secret.Labels[syncv1.ApplicationLabel] != app {
		t.Fatalf("desired-state Secret type %q, labels %v, owners %v", secret.Type, secret.Labels, secret.OwnerReferences)
	}
	objs, err := desiredstate.Decode(secret.Data[desiredstate.DataKey])
	if err != nil || len(objs) != 1 {
		t.Fatalf("desired state %v, %v", objs, err)
	}
	if got, _, _ := unstructured.NestedString(objs[0].Object, "data", "color"); got != color {
		t.Fatalf("preview rendered color %q, want %q", got, color)
	}
	return rev
}
