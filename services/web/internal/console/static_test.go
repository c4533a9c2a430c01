package console

import (
	"net/http"
	"strings"
	"testing"
)

// TestStatic_ServesAssetsByTypeAndAnswersAnythingElseWithTheConsoles404:
// an asset is served whole with its type (the console sends nosniff, so a
// wrong type would drop the stylesheet), and a path naming no asset gets
// the console's own 404 page with every security header, Cache-Control
// included, which http.FileServer's error answers dropped.
func TestStatic_ServesAssetsByTypeAndAnswersAnythingElseWithTheConsoles404(t *testing.T) {
	f := start(t)
	tests := []struct {
		name, method, path string
		status             int
		contentType        string
		body               string
	}{
		{"stylesheet", http.MethodGet, "/static/console.css", http.StatusOK, "text/css; charset=utf-8", "font-family: system-ui"},
		{"live-update script", http.MethodGet, "/static/live.js", http.StatusOK, "text/javascript; charset=utf-8", "new EventSource(live.dataset.events)"},
		{"stylesheet by HEAD", http.MethodHead, "/static/console.css", http.StatusOK, "text/css; charset=utf-8", ""},
		{"directory", http.MethodGet, "/static/", http.StatusNotFound, "text/html; charset=utf-8", "There is no such page in the console."},
		{"missing file", http.MethodGet, "/static/missing.css", http.StatusNotFound, "text/html; charset=utf-8", "There is no such page in the console."},
		{"encoded dot-dot", http.MethodGet, "/static/%2e%2e/static/console.css", http.StatusNotFound, "text/html; charset=utf-8", "There is no such page in the console."},
		{"dot", http.MethodGet, "/static/.", http.StatusNotFound, "text/html; charset=utf-8", "There is no such page in the console."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := f.send(t, hostileRequest{method: tt.method, path: tt.path})
			if resp.status != tt.status {
				t.Fatalf("%s %s: %d, want %d:\n%.2000s", tt.method, tt.path, resp.status, tt.status, resp.body)
			}
			if got := resp.header.Get("Content-Type"); got != tt.contentType {
				t.Errorf("Content-Type %q, want %q", got, tt.contentType)
			}
			if !strings.Contains(resp.body, tt.body) {
				t.Errorf("body lacks %q:\n%.2000s", tt.body, resp.body)
			}
			if tt.method == http.MethodHead && resp.body != "" {
				t.Errorf("HEAD answered a body of %d bytes", len(resp.body))
			}
			for h, want := range map[string]string{"Content-Security-Policy": contentSecurityPolicy,
				"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY",
				"Referrer-Policy": "no-referrer", "Cache-Control": "no-store"} {
				if got := resp.header.Get(h); got != want {
					t.Errorf("%s: %q, want %q", h, got, want)
				}
			}
		})
	}
}
