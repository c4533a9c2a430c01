package controller_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// A new leader, or a restarted replica, starts with an empty cache while the
// Repository's status already names a commit. Rendering before the first
// fetch there must wait for it, never record the cold cache as a Failed
// Revision.
func TestRender_ColdCacheWaitsForTheFetchInsteadOfFailing(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	_, repo := newRepository(t, ns, "platform", map[string]string{
		"apps/web/settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  color: blue\n",
	})
	eventually(t, "the Repository to fetch", func() bool {
		return get(t, &syncv1.Repository{}, ns, "platform").Status.Artifact != nil
	})
	for _, part := range []string{"repos", "checkouts"} {
		if err := os.RemoveAll(filepath.Join(cacheDir, "git", part, ns, "platform")); err != nil {
			t.Fatal(err)
		}
	}

	newApplication(t, ns, "web", "platform", "apps/web")
	var waiting *metav1.Condition
	eventually(t, "the Application to wait for the fetch", func() bool {
		waiting = meta.FindStatusCondition(get(t, &syncv1.Application{}, ns, "web").Status.Conditions, syncv1.ConditionRendered)
		return waiting != nil && waiting.Status == metav1.ConditionFalse
	})
	if waiting.Reason != syncv1.ReasonProgressing || !strings.Contains(waiting.Message, "to fetch commit") || !strings.Contains(waiting.Message, "retrying in") {
		t.Fatalf("Rendered = %s %q, want Progressing, waiting for the fetch and retrying", waiting.Reason, waiting.Message)
	}
	if revs := revisionsOf(t, ns, "web"); len(revs) != 0 {
		t.Fatalf("a cold cache recorded %d Revisions (first phase %s), want none", len(revs), revs[0].Status.Phase)
	}

	// What a new leader's Repository reconciler does first: fetch.
	requestFetch(t, get(t, &syncv1.Repository{}, ns, repo.Name))
	eventually(t, "the Application to render after the fetch", func() bool {
		app := get(t, &syncv1.Application{}, ns, "web")
		c := meta.FindStatusCondition(app.Status.Conditions, syncv1.ConditionRendered)
		return c != nil && c.Status == metav1.ConditionTrue && app.Status.DesiredRevision != ""
	})
	for _, rev := range revisionsOf(t, ns, "web") {
		if rev.Status.Phase == syncv1.PhaseFailed {
			t.Fatalf("Revision %s is Failed: %+v", rev.Name, rev.Status.Conditions)
		}
	}
}
