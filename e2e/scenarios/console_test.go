package scenarios_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// TestE2E_ConsoleShowsWhatTheRealServicesDeployed: the web service the
// harness and `make demo` run serves its console; a viewer token made as
// the demo makes it signs in and sees the Application the real services
// synced, with its deployed Revision, and its page.
func TestE2E_ConsoleShowsWhatTheRealServicesDeployed(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-console")
	repository(t, ns, "platform", map[string]string{
		".ksync.yaml": `metadata: {name: web}
spec:
  source: {path: app}
  serviceAccountName: deployer
  sync: {automatic: true}
`,
		"app/deployment.yaml": deployment("web", "web:1.0"),
	})
	deployed := waitHealthy(t, ns, "web", "")
	token, err := env.ViewerToken(t.Context(), ns, "console-viewer", time.Hour)
	if err != nil {
		t.Fatal(err)
	}

	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := c.Get(services.ConsoleURL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(body)
	}
	status, page := get("/sign-in")
	m := csrfField.FindStringSubmatch(page)
	if status != http.StatusOK || m == nil {
		t.Fatalf("GET /sign-in: %d without a CSRF field:\n%s", status, page)
	}
	resp, err := c.PostForm(services.ConsoleURL+"/sign-in", url.Values{"csrf": {m[1]}, "token": {token}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path == "/sign-in" {
		t.Fatalf("signing in ended on %s with %d", resp.Request.URL, resp.StatusCode)
	}

	status, page = get("/applications?namespace=" + ns)
	for _, want := range []string{"web", deployed, "Synced", "Healthy"} {
		if status != http.StatusOK || !strings.Contains(page, want) {
			t.Fatalf("GET /applications?namespace=%s: %d, %q missing:\n%s", ns, status, want, page)
		}
	}
	status, page = get("/applications/" + ns + "/web")
	if status != http.StatusOK || !strings.Contains(page, deployed) {
		t.Fatalf("GET /applications/%s/web: %d, deployed Revision %s missing:\n%s", ns, status, deployed, page)
	}
	if strings.Contains(page, token) {
		t.Fatal("the Application page holds the sign-in token")
	}
}
