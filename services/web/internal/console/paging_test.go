package console

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

var (
	appLink  = regexp.MustCompile(`<a href="/applications/([^/"]+)/([^"]+)">`)
	nextLink = regexp.MustCompile(`<a id="next" href="([^"]+)">`)
)

// listCase is one walk through a list page.
type listCase struct {
	name  string
	first string
	want  int
	// maxPages bounds how many pages it may take.
	maxPages int
	// only, when set, holds every name the filter may show.
	only map[string]bool
}

// pageThrough reads the list page tt.first and every "Next page" after
// it and checks that they show tt.want objects of the fixture's namespace,
// each once, all matching tt.only; row matches a row, its first group the
// namespace, its second the name.
func (f *fixture) pageThrough(t *testing.T, tt listCase, s *http.Cookie, row *regexp.Regexp) {
	t.Helper()
	seen := map[string]int{}
	path, pages := tt.first, 0
	for path != "" {
		pages++
		if pages > tt.maxPages {
			t.Fatalf("more than %d pages", tt.maxPages)
		}
		resp := f.do(http.MethodGet, path, []*http.Cookie{s}, nil)
		if resp.status != http.StatusOK {
			t.Fatalf("GET %s: %d\n%s", path, resp.status, resp.body)
		}
		for _, m := range row.FindAllStringSubmatch(resp.body, -1) {
			if m[1] == f.ns {
				seen[m[2]]++
			}
		}
		path = ""
		if m := nextLink.FindStringSubmatch(resp.body); m != nil {
			u, err := url.Parse(html.UnescapeString(m[1]))
			must(t, err)
			path = u.String()
		}
	}
	if len(seen) != tt.want {
		t.Errorf("saw %d over %d pages, want %d", len(seen), pages, tt.want)
	}
	for name, n := range seen {
		if n != 1 {
			t.Errorf("%s shown %d times", name, n)
		}
		if tt.only != nil && !tt.only[name] {
			t.Errorf("%s shown, but it does not match the filter", name)
		}
	}
}

// TestApplications_PagesServerSide: the list is read page by page from the
// API server; following "Next page" shows every Application exactly once,
// with and without the namespace and state filters.
func TestApplications_PagesServerSide(t *testing.T) {
	f := start(t)
	degraded := map[string]bool{}
	for i := range 120 {
		name := fmt.Sprintf("app-%03d", i)
		st := &syncv1.ApplicationStatus{Sync: syncv1.SyncStateSynced, Health: syncv1.HealthHealthy, Phase: syncv1.PhaseHealthy}
		if i%7 == 0 {
			st.Health, st.Phase = syncv1.HealthDegraded, syncv1.PhaseFailed
			degraded[name] = true
		}
		f.application(name, nil, st)
	}
	s := f.signIn(f.token("viewer", true))

	for _, tt := range []listCase{
		{"namespace, 50 a page", "/applications?namespace=" + f.ns, 120, 3, nil},
		{"namespace, 7 a page", "/applications?limit=7&namespace=" + f.ns, 120, 18, nil},
		{"state filter", "/applications?limit=10&state=Degraded&namespace=" + f.ns, len(degraded), 12, degraded},
		{"phase filter", "/applications?limit=10&state=Failed&namespace=" + f.ns, len(degraded), 12, degraded},
	} {
		t.Run(tt.name, func(t *testing.T) { f.pageThrough(t, tt, s, appLink) })
	}

	if resp := f.do(http.MethodGet, "/applications?limit=5000", []*http.Cookie{s}, nil); resp.status != http.StatusBadRequest {
		t.Errorf("limit=5000: %d, want 400", resp.status)
	}
}
