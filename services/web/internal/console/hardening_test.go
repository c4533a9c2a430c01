package console

import (
	"net/http"
	"strings"
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestPages_RenderClusterValuesInert: values from the cluster are escaped,
// only http(s) URLs become links (a javascript: annotation, as in Argo CD's
// CVE-2024-28175, stays text), the only script is the console's own file
// static/live.js, and every answer carries a CSP that allows no inline
// script and no eval.
func TestPages_RenderClusterValuesInert(t *testing.T) {
	f := start(t)
	f.application("hostile", nil, &syncv1.ApplicationStatus{DeployedRevision: "<script>alert(2)</script>"})
	f.waitingApplication("shop", map[string]string{
		"example.com/runbook":  "javascript:alert(1)",
		"example.com/data":     "data:text/html,<script>alert(3)</script>",
		"example.com/script":   "<script>alert(4)</script>",
		"example.com/homepage": "https://example.com/shop?a=1&b=2",
		"example.com/quote":    `"><img src=x onerror=alert(5)>`,
	})
	s := f.signIn(f.token("viewer", true))

	tests := []struct {
		name    string
		path    string
		status  int
		want    []string
		notWant []string
	}{
		{"annotations", "/applications/" + f.ns + "/shop", http.StatusOK,
			[]string{`<a href="https://example.com/shop?a=1&amp;b=2" rel="noopener noreferrer">`, "javascript:alert(1)", "&lt;script&gt;alert(4)&lt;/script&gt;"},
			[]string{`href="javascript:`, `href="data:`, "<script>", "<img src=x", "onerror=alert(5)>"}},
		{"hostile status in the list", "/applications?namespace=" + f.ns, http.StatusOK,
			[]string{"&lt;script&gt;alert(2)&lt;/script&gt;"}, []string{"<script>"}},
		{"sign-in page", "/sign-in", http.StatusOK, nil, []string{"<script"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := f.do(http.MethodGet, tt.path, []*http.Cookie{s}, nil)
			if resp.status != tt.status {
				t.Fatalf("status %d, want %d:\n%s", resp.status, tt.status, resp.body)
			}
			for _, w := range tt.want {
				if !strings.Contains(resp.body, w) {
					t.Errorf("page lacks %q", w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(resp.body, w) {
					t.Errorf("page holds %q", w)
				}
			}
			if got := resp.header.Get("Content-Security-Policy"); got != contentSecurityPolicy || !strings.Contains(got, "script-src 'self';") ||
				strings.Contains(got, "unsafe-") || strings.Contains(got, "nonce-") {
				t.Errorf("Content-Security-Policy %q", got)
			}
			if strings.Contains(withoutOwnScript(resp.body), "<script") {
				t.Error("page holds a script other than static/live.js")
			}
			for h, want := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY",
				"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"} {
				if got := resp.header.Get(h); got != want {
					t.Errorf("%s: %q, want %q", h, got, want)
				}
			}
		})
	}
}

// TestSafeLink_OnlyHTTPAndHTTPS is the link rule on its own.
func TestSafeLink_OnlyHTTPAndHTTPS(t *testing.T) {
	for in, want := range map[string]string{
		"https://example.com/a":    "https://example.com/a",
		"http://example.com":       "http://example.com",
		"HTTPS://example.com":      "https://example.com",
		"javascript:alert(1)":      "",
		"JavaScript:alert(1)":      "",
		" javascript:alert(1)":     "",
		"data:text/html,x":         "",
		"//example.com":            "",
		"/applications":            "",
		"https:///no-host":         "",
		"vbscript:msgbox":          "",
		"java\tscript:alert(1)":    "",
		"https://exa mple.com/%zz": "",
	} {
		if got := safeLink(in); got != want {
			t.Errorf("safeLink(%q) = %q, want %q", in, got, want)
		}
	}
}

// ownScript is how a page loads the console's one script, static/live.js.
const ownScript = `<script src="/static/live.js" defer></script>`

// withoutOwnScript is body without the console's own script tag, for
// checks that an answer holds no other script.
func withoutOwnScript(body string) string { return strings.ReplaceAll(body, ownScript, "") }
