package controller_test

import (
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	testgit "github.com/kuvryn/kuvryn-sync/pkg/testkit/git"
)

const previewKsync = `applications:
  - metadata: {name: web}
    spec: {source: {path: apps/web}}
  - metadata: {name: api}
    spec: {source: {path: apps/api}}
`

// TestPreview_ChangedEntriesAndNewApplicationsFromKsyncYAML: a pull request
// that edits an Application's .ksync.yaml entry previews it with the new
// entry, one that declares a new Application previews it as new, and an
// Application whose entry and files are untouched is not previewed.
func TestPreview_ChangedEntriesAndNewApplicationsFromKsyncYAML(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	blue := strings.Replace(configMap, "%s", "blue", 1)
	gitRepo, repo := newRepository(t, ns, "platform", map[string]string{
		".ksync.yaml": previewKsync, "apps/web/settings.yaml": blue, "apps/api/settings.yaml": blue,
	})
	eventually(t, "web and api discovered", func() bool {
		return len(revisionsOf(t, ns, "web")) == 1 && len(revisionsOf(t, ns, "api")) == 1
	})
	enablePreviews(t, ns, repo.Name, syncv1.PreviewsSpec{PullRequests: syncv1.PreviewProviderGitLab, MaxActive: 10})

	changed := strings.Replace(previewKsync, "path: apps/web}", "path: apps/web-v2}", 1) + `  - metadata: {name: worker}
    spec:
      serviceAccountName: worker-deployer
      destination: {namespace: jobs}
      source: {path: apps/worker}
`
	head, err := gitRepo.Apply("rework", "move web, add worker",
		testgit.File(".ksync.yaml", changed),
		testgit.File("apps/web-v2/settings.yaml", strings.Replace(configMap, "%s", "green", 1)),
		testgit.File("apps/worker/settings.yaml", strings.Replace(configMap, "%s", "purple", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if err := gitRepo.SetRef("refs/merge-requests/9/head", head); err != nil {
		t.Fatal(err)
	}
	requestPreview(t, ns, repo.Name, "mr-9", syncv1.PreviewRequest{Number: 9, Branch: "rework"})

	p := previewRendered(t, ns, repo.Name, "mr-9", head)
	if p.Ref != "refs/merge-requests/9/head" || !slices.Equal(p.Applications, []string{"web", "worker"}) {
		t.Fatalf("status.previews entry %+v, want ref refs/merge-requests/9/head and applications [web worker]", p)
	}
	for _, rev := range previewRevisions(t, ns, "mr-9") {
		switch rev.Spec.ApplicationName {
		case "web":
			checkPreviewRevision(t, &rev, "web", "mr-9", repo, head, "apps/web-v2", "green")
			if rev.Spec.Preview.NewApplication != nil {
				t.Errorf("web exists, yet its preview says newApplication %+v", rev.Spec.Preview.NewApplication)
			}
		case "worker":
			checkPreviewRevision(t, &rev, "worker", "mr-9", repo, head, "apps/worker", "purple")
			if na := rev.Spec.Preview.NewApplication; na == nil || na.ServiceAccountName != "worker-deployer" || na.DestinationNamespace != "jobs" {
				t.Errorf("worker's newApplication %+v, want worker-deployer in jobs", na)
			}
		default:
			t.Errorf("preview Revision of %s, which the merge request does not change", rev.Spec.ApplicationName)
		}
	}
	if err := k8s.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "worker"}, &syncv1.Application{}); !apierrors.IsNotFound(err) {
		t.Fatalf("reading Application worker, which only the preview declares: %v, want NotFound", err)
	}
}
