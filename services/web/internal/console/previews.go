package console

import (
	"fmt"
	"net/http"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// maxPreviews bounds the preview Revisions an Application's page lists:
// one per open pull request and branch (at most spec.previews.maxActive,
// 50) plus the closed ones kept for a while.
const maxPreviews = 100

// previewsView is the previews section of an Application's page.
type previewsView struct {
	Items []previewItem
	// More: the Application has more preview Revisions than listed.
	More bool
	// Error says why they could not be listed.
	Error string
}

// previewItem is one preview Revision and its latest failure, if any.
type previewItem struct {
	Rev     *syncv1.Revision
	Failure *metav1.Condition
}

// previews lists app's preview Revisions with the person's token, by the
// labels the source-controller puts on them, newest first. Their plans'
// diffs are already redacted by the sync-controller; the desired-state
// Secrets are never read.
func (c *Console) previews(r *http.Request, user string, app *syncv1.Application) previewsView {
	var list syncv1.RevisionList
	err := c.users.List(r.Context(), &list, client.InNamespace(app.Namespace), client.Limit(maxPreviews),
		client.MatchingLabels{syncv1.ApplicationLabel: app.Name}, client.HasLabels{syncv1.PreviewLabel})
	switch {
	case apierrors.IsForbidden(err):
		return previewsView{Error: fmt.Sprintf("Kubernetes refuses to let %s list the Revisions of %s/%s.", user, app.Namespace, app.Name)}
	case err != nil:
		c.log.Error(err, "listing preview Revisions", "namespace", app.Namespace, "application", app.Name)
		return previewsView{Error: "Listing the previews failed; reload to try again."}
	}
	v := previewsView{More: list.Continue != ""}
	for i := range list.Items {
		rev := &list.Items[i]
		if !rev.IsPreview() || rev.Spec.ApplicationName != app.Name {
			continue
		}
		v.Items = append(v.Items, previewItem{Rev: rev, Failure: previewFailure(rev)})
	}
	sort.SliceStable(v.Items, func(i, j int) bool {
		a, b := v.Items[i].Rev, v.Items[j].Rev
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return b.CreationTimestamp.Before(&a.CreationTimestamp)
		}
		return a.Name < b.Name
	})
	return v
}

// previewFailure is the Planned condition when it is False, the reason a
// preview's plan failed; a render failure is one too.
func previewFailure(rev *syncv1.Revision) *metav1.Condition {
	if c := meta.FindStatusCondition(rev.Status.Conditions, syncv1.ConditionPlanned); c != nil && c.Status == metav1.ConditionFalse {
		return c
	}
	return nil
}
