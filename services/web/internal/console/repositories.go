package console

import (
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

type repositoriesPage struct {
	Frame
	Query listQuery
	Items []syncv1.Repository
	Next  string
	// Policies are the first page of ImagePolicies in the same namespaces:
	// what image updates write back. PoliciesMore says there are more.
	Policies     []syncv1.ImagePolicy
	PoliciesMore bool
	// PoliciesError says why the ImagePolicies could not be read.
	PoliciesError string
}

// repositories lists one page of Repositories and, on the first page, the
// ImagePolicies whose selections image updates commit to them.
func (c *Console) repositories(w http.ResponseWriter, r *http.Request) {
	q, err := parseListQuery(r, "Repositories")
	if err != nil {
		c.badRequest(w, r, "repositories", err)
		return
	}
	var list syncv1.RepositoryList
	if err := c.users.List(r.Context(), &list, q.listOptions(q.Continue)...); err != nil {
		c.listFailed(w, r, q, "/repositories", "Repositories"+inNamespace(q.Namespace), q.Continue, err)
		return
	}
	page := repositoriesPage{Frame: c.pageFrame(r, "repositories"), Query: q, Items: list.Items,
		Next: q.next("/repositories", list.Continue)}
	if q.Continue == "" {
		var policies syncv1.ImagePolicyList
		err := c.users.List(r.Context(), &policies, q.listOptions("")...)
		switch {
		case err == nil:
			page.Policies, page.PoliciesMore = policies.Items, policies.Continue != ""
		case apierrors.IsForbidden(err):
			page.PoliciesError = fmt.Sprintf("Kubernetes refuses to let %s read ImagePolicies%s.", page.User, inNamespace(q.Namespace))
		default:
			c.readFailed(w, r, "ImagePolicies"+inNamespace(q.Namespace), err)
			return
		}
	}
	c.render(w, http.StatusOK, "repositories.html", page)
}
