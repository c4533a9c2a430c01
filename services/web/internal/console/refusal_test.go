package console

import (
	"net/http"
	"strings"
	"testing"
)

// TestUnprivilegedToken_SeesARefusalPage: a token the API server accepts
// but RBAC grants nothing signs in, and then every page says clearly that
// Kubernetes refuses, naming the user, instead of crashing or showing an
// empty list.
func TestUnprivilegedToken_SeesARefusalPage(t *testing.T) {
	f := start(t)
	f.application("web", nil, nil)
	s := f.signIn(f.token("nobody", false))
	user := "system:serviceaccount:" + f.ns + ":nobody"
	for _, path := range []string{"/applications", "/applications?namespace=" + f.ns, "/applications/" + f.ns + "/web", "/revisions", "/repositories"} {
		t.Run(path, func(t *testing.T) {
			resp := f.do(http.MethodGet, path, []*http.Cookie{s}, nil)
			if resp.status != http.StatusForbidden {
				t.Fatalf("status %d, want 403:\n%s", resp.status, resp.body)
			}
			for _, want := range []string{`id="refused"`, user, "forbidden", "kuvryn-sync-viewer"} {
				if !strings.Contains(resp.body, want) {
					t.Errorf("refusal page lacks %q:\n%s", want, resp.body)
				}
			}
			if strings.Contains(resp.body, `id="applications"`) {
				t.Error("the refusal page shows an (empty) Applications table")
			}
		})
	}
}
