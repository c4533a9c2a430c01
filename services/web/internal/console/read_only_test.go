package console

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestConsole_AnswersEveryMutatingMethodWith405: on every route, known or
// not, signed in or not, every method but GET and HEAD is refused (POST
// only takes the sign-in and sign-out forms), and the cluster is left as
// it was.
func TestConsole_AnswersEveryMutatingMethodWith405(t *testing.T) {
	f := start(t)
	app := f.application("web", nil, nil)
	s := f.signIn(f.token("viewer", true))
	routes := []string{"/", "/applications", "/applications?namespace=" + f.ns, "/applications/" + f.ns + "/web",
		"/repositories", "/static/console.css", "/sign-in", "/sign-out", "/no-such-page"}
	methods := []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete,
		http.MethodOptions, http.MethodTrace, "PROPFIND"}
	for _, route := range routes {
		for _, method := range methods {
			if method == http.MethodPost && (route == "/sign-in" || route == "/sign-out") {
				continue
			}
			for _, cookies := range [][]*http.Cookie{nil, {s}} {
				resp := f.do(method, route, cookies, url.Values{"token": {"x"}})
				if resp.status != http.StatusMethodNotAllowed {
					t.Errorf("%s %s (signed in: %v): %d, want 405", method, route, cookies != nil, resp.status)
				}
				if resp.header.Get("Allow") == "" {
					t.Errorf("%s %s: 405 without an Allow header", method, route)
				}
			}
		}
		// Signing out is a POST form only.
		if route == "/sign-out" {
			continue
		}
		if resp := f.do(http.MethodHead, route, []*http.Cookie{s}, nil); resp.status == http.StatusMethodNotAllowed {
			t.Errorf("HEAD %s: 405, want it served", route)
		}
	}
	var now syncv1.Application
	must(t, admin.Get(context.Background(), client.ObjectKeyFromObject(app), &now))
	if now.ResourceVersion != app.ResourceVersion {
		t.Errorf("the Application changed: resourceVersion %s -> %s", app.ResourceVersion, now.ResourceVersion)
	}
}
