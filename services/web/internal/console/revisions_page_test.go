package console

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

var revisionRow = regexp.MustCompile(`<td>([^<]+)</td>\s*<td class="revision">([^<]+)</td>`)

// revision creates a Revision of app labelled as the source-controller
// labels it, with status when not nil.
func (f *fixture) revision(name, app string, status *syncv1.RevisionStatus) *syncv1.Revision {
	f.t.Helper()
	ctx := context.Background()
	rev := &syncv1.Revision{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name, Labels: map[string]string{syncv1.ApplicationLabel: app}},
		Spec: syncv1.RevisionSpec{ApplicationName: app,
			DesiredState: syncv1.DesiredStateRef{SecretName: name, Digest: "sha256:" + strings.Repeat("ef", 32), Objects: 1}},
	}
	must(f.t, admin.Create(ctx, rev))
	if status != nil {
		rev.Status = *status
		must(f.t, admin.Status().Update(ctx, rev))
	}
	return rev
}

// TestRevisionsPage_PagesFiltersAndShowsApprovals: Revisions are read page
// by page from the API server, filtered by namespace and, with the
// Application label, by Application; each row shows the phase, both
// digests shortened, who approved and when, rollbacks, and links to its
// Application.
func TestRevisionsPage_PagesFiltersAndShowsApprovals(t *testing.T) {
	f := start(t)
	// The Application's name is the namespace's, so that across all
	// namespaces only its Revisions match.
	shopApp, shop := "shop-"+f.ns, map[string]bool{}
	for i := range 23 {
		name := fmt.Sprintf("shop-%010d", i)
		f.revision(name, shopApp, &syncv1.RevisionStatus{Phase: syncv1.PhaseSuperseded})
		shop[name] = true
	}
	for i := range 6 {
		f.revision(fmt.Sprintf("billing-%010d", i), "billing", nil)
	}
	at := metav1.NewTime(time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC))
	f.revision("web-approved", "web", &syncv1.RevisionStatus{Phase: syncv1.PhaseHealthy,
		Plan:     &syncv1.Plan{Digest: "sha256:" + strings.Repeat("12", 32), PlannedAt: at},
		Approval: &syncv1.ApprovalRecord{Revision: "web-approved", By: "alice@example.com", At: at, Digest: "sha256:" + strings.Repeat("12", 32)}})
	f.revision("web-rollback", "web", &syncv1.RevisionStatus{Phase: syncv1.PhaseApplying,
		Approval: &syncv1.ApprovalRecord{Revision: "web-rollback", By: "bob@example.com", At: at, Digest: "sha256:" + strings.Repeat("ef", 32), Rollback: true}})
	f.revision("web-gone", "web", &syncv1.RevisionStatus{Phase: syncv1.PhaseRolledBack})
	s := f.signIn(f.token("viewer", true))

	for _, tt := range []listCase{
		{"namespace, 50 a page", "/revisions?namespace=" + f.ns, 32, 1, nil},
		{"namespace, 5 a page", "/revisions?limit=5&namespace=" + f.ns, 32, 7, nil},
		{"one Application", "/revisions?limit=10&application=" + shopApp + "&namespace=" + f.ns, 23, 3, shop},
		{"one Application, all namespaces", "/revisions?limit=4&application=" + shopApp, 23, 6, shop},
	} {
		t.Run(tt.name, func(t *testing.T) { f.pageThrough(t, tt, s, revisionRow) })
	}

	resp := f.do(http.MethodGet, "/revisions?application=web&namespace="+f.ns, []*http.Cookie{s}, nil)
	rows := map[string]string{}
	for _, row := range strings.Split(resp.body, "<tr>") {
		if m := revisionRow.FindStringSubmatch(row); m != nil {
			rows[m[2]] = row
		}
	}
	for name, wants := range map[string][]string{
		"web-approved": {`<a href="/applications/` + f.ns + `/web">web</a>`, "Healthy", "sha256:" + strings.Repeat("ef", 6),
			"sha256:" + strings.Repeat("12", 6) + "</code>", "alice@example.com at 2026-12-01T09:30:00Z"},
		"web-rollback": {"Applying", "bob@example.com", "<td>rollback</td>"},
		"web-gone":     {"RolledBack", "<td>rolled back</td>"},
	} {
		for _, want := range wants {
			if !strings.Contains(rows[name], want) {
				t.Errorf("row of %s lacks %q:\n%s", name, want, rows[name])
			}
		}
	}
	if strings.Contains(rows["web-approved"], "sha256:"+strings.Repeat("12", 32)+"</code>") {
		t.Error("the plan digest is not shortened")
	}

	for _, bad := range []string{"/revisions?state=Failed", "/revisions?application=no%20such", "/revisions?limit=0"} {
		if resp := f.do(http.MethodGet, bad, []*http.Cookie{s}, nil); resp.status != http.StatusBadRequest || !strings.Contains(resp.body, "Bad request") {
			t.Errorf("%s: %d, want 400:\n%s", bad, resp.status, resp.body)
		}
	}
}

// applicationsOnly signs in ServiceAccount apps-only, which may get and
// list the Applications of the fixture's namespace and nothing else, and
// returns its session and user name.
func (f *fixture) applicationsOnly() (*http.Cookie, string) {
	f.t.Helper()
	ctx := context.Background()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "applications-only"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{syncv1.GroupVersion.Group}, Resources: []string{"applications"}, Verbs: []string{"get", "list"}}}}
	must(f.t, admin.Create(ctx, role))
	s := f.signIn(f.token("apps-only", false))
	must(f.t, bind(ctx, "Role", f.ns, role.Name, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: f.ns, Name: "apps-only"}))
	return s, "system:serviceaccount:" + f.ns + ":apps-only"
}

// TestRevisionsPage_RefusedWithoutListOnRevisions: a person who may read
// Applications but not Revisions sees the Applications, and the refusal
// page, naming them, on the Revisions page; the Application page still
// shows, saying the Revision could not be read.
func TestRevisionsPage_RefusedWithoutListOnRevisions(t *testing.T) {
	f := start(t)
	f.waitingApplication("shop", nil)
	s, user := f.applicationsOnly()

	if resp := f.getOnceBound("/applications?namespace="+f.ns, s, http.StatusOK); resp.status != http.StatusOK || !strings.Contains(resp.body, "shop") {
		t.Fatalf("Applications: %d\n%s", resp.status, resp.body)
	}
	for _, path := range []string{"/revisions?namespace=" + f.ns, "/revisions?namespace=" + f.ns + "&application=shop", "/revisions"} {
		resp := f.do(http.MethodGet, path, []*http.Cookie{s}, nil)
		if resp.status != http.StatusForbidden {
			t.Fatalf("GET %s: %d, want 403:\n%s", path, resp.status, resp.body)
		}
		for _, want := range []string{`id="refused"`, user, "Revisions", "forbidden", "kuvryn-sync-viewer"} {
			if !strings.Contains(resp.body, want) {
				t.Errorf("GET %s: the refusal page lacks %q:\n%s", path, want, resp.body)
			}
		}
		if strings.Contains(resp.body, `id="revisions"`) {
			t.Errorf("GET %s: the refusal page shows an (empty) Revisions table", path)
		}
	}
	resp := f.do(http.MethodGet, "/applications/"+f.ns+"/shop", []*http.Cookie{s}, nil)
	if resp.status != http.StatusOK || !strings.Contains(resp.body, "Kubernetes refuses to let "+user+" read Revision "+f.ns+"/shop-0123456789") {
		t.Errorf("Application page: %d, no note that the Revision is not readable:\n%s", resp.status, resp.body)
	}
	if !strings.Contains(resp.body, `href="/revisions?namespace=`+f.ns+`&amp;application=shop"`) {
		t.Error("the Application page does not link to its Revisions")
	}
}
