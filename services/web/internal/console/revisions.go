package console

import (
	"fmt"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

type revisionsPage struct {
	Frame
	Query listQuery
	Items []syncv1.Revision
	Next  string
}

// revisions lists one page of Revisions straight from the API server, of
// one Application when the query names one: the label the
// source-controller puts on every Revision selects them on the server.
func (c *Console) revisions(w http.ResponseWriter, r *http.Request) {
	q, err := parseListQuery(r, "Revisions", "application")
	if err == nil && q.Application != "" {
		if msgs := validation.IsValidLabelValue(q.Application); len(msgs) > 0 {
			err = fmt.Errorf("application %s is not an Application name: %s", quoted(q.Application), strings.Join(msgs, "; "))
		}
	}
	if err != nil {
		c.badRequest(w, r, "revisions", err)
		return
	}
	var extra []client.ListOption
	what := "Revisions"
	if q.Application != "" {
		extra = append(extra, client.MatchingLabelsSelector{Selector: syncv1.DesiredRevisionSelector(q.Application)})
		what += " of Application " + q.Application
	}
	var list syncv1.RevisionList
	if err := c.users.List(r.Context(), &list, q.listOptions(q.Continue, extra...)...); err != nil {
		c.listFailed(w, r, q, "/revisions", what+inNamespace(q.Namespace), q.Continue, err)
		return
	}
	c.render(w, http.StatusOK, "revisions.html", revisionsPage{Frame: c.pageFrame(r, "revisions"), Query: q,
		Items: list.Items, Next: q.next("/revisions", list.Continue)})
}

// shortDigest is "sha256:" and the first 12 hex digits of a digest, enough
// to tell Revisions apart in a table; the page keeps the full one in a title.
func shortDigest(d string) string {
	algo, hex, ok := strings.Cut(d, ":")
	if !ok || len(hex) <= 12 {
		return d
	}
	return algo + ":" + hex[:12]
}
