package console

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// hostileRequest is one request an attacker sends to the console and what
// the console must answer.
type hostileRequest struct {
	name    string
	method  string
	path    string
	header  map[string]string
	cookies []*http.Cookie
	// body is sent as a form when not empty.
	body string
	// status is the answer's status; location, when set, its Location.
	status   int
	location string
	want     []string
	notWant  []string
}

// send sends tt to the fixture's console as is: no redirects followed, the
// path not cleaned.
func (f *fixture) send(t *testing.T, tt hostileRequest) response {
	t.Helper()
	var body io.Reader
	if tt.body != "" {
		body = strings.NewReader(tt.body)
	}
	req, err := http.NewRequest(tt.method, f.url+tt.path, body)
	must(t, err)
	if tt.body != "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range tt.header {
		req.Header.Set(k, v)
	}
	for _, c := range tt.cookies {
		req.AddCookie(c)
	}
	resp, err := noRedirects.Do(req)
	must(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must(t, err)
	return response{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// versions are the resourceVersions of the namespace's objects of every
// kind the console reads or could be tricked into writing, and of the
// namespace itself.
func (f *fixture) versions(t *testing.T) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	var ns corev1.Namespace
	must(t, admin.Get(ctx, client.ObjectKey{Name: f.ns}, &ns))
	out["Namespace/"+f.ns] = ns.ResourceVersion
	lists := map[string]client.ObjectList{
		"Application": &syncv1.ApplicationList{}, "Revision": &syncv1.RevisionList{},
		"Repository": &syncv1.RepositoryList{}, "Secret": &corev1.SecretList{},
		"ConfigMap": &corev1.ConfigMapList{}, "Service": &corev1.ServiceList{},
		"ServiceAccount": &corev1.ServiceAccountList{},
	}
	for kind, list := range lists {
		must(t, admin.List(ctx, list, client.InNamespace(f.ns)))
		items, err := meta.ExtractList(list)
		must(t, err)
		for _, item := range items {
			o, err := meta.Accessor(item)
			must(t, err)
			out[kind+"/"+o.GetName()] = o.GetResourceVersion()
		}
	}
	return out
}

// TestHostileConsoleRequest_EveryRequestIsRefusedAndNothingChanges is the
// one table of hostile requests to the console (#19): path traversal,
// malformed names and paging, open redirects, forged or foreign cookies,
// CSRF-less posts, writes, oversized forms, tokens in URLs and script in
// cluster values. Each is refused or rendered inert, every answer carries
// the security headers, no answer holds a token or a Secret's value, and
// afterwards no object in the namespace has changed.
func TestHostileConsoleRequest_EveryRequestIsRefusedAndNothingChanges(t *testing.T) {
	f := start(t)
	ctx := context.Background()
	const secretValue = "hostile-table-secret-value-5f1c"
	must(t, admin.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "credentials"},
		StringData: map[string]string{"password": secretValue}}))
	f.waitingApplication("shop", map[string]string{
		"example.com/script": "<script>alert(1)</script>",
		"example.com/quote":  `"><svg onload=alert(2)>`,
	})
	viewerToken := f.token("viewer", true)
	s := f.signIn(viewerToken)
	// Wait until RBAC lets the viewer read, so refusals below are the
	// console's, not a binding not yet seen.
	if resp := f.getOnceBound("/applications?namespace="+f.ns, s, http.StatusOK); resp.status != http.StatusOK {
		t.Fatalf("the viewer cannot read Applications: %d\n%s", resp.status, resp.body)
	}
	page := f.do(http.MethodGet, "/applications", []*http.Cookie{s}, nil)
	m := csrfField.FindStringSubmatch(page.body)
	if m == nil {
		t.Fatalf("no sign-out form on:\n%s", page.body)
	}
	sessionCSRF := m[1]
	formCookie, formCSRF := f.signInForm()

	// A session sealed by another console (another key) for the same user.
	other := newConsole(t, cp, nil)
	otherSrv := httptest.NewServer(other.Handler())
	t.Cleanup(otherSrv.Close)
	foreign := (&fixture{t: t, ns: f.ns, url: otherSrv.URL, console: other}).signIn(viewerToken)
	tampered := *s
	b := []byte(tampered.Value)
	b[len(b)/2] ^= 1
	tampered.Value = string(b)
	garbage := &http.Cookie{Name: sessionCookie, Value: "garbage"}
	oversized := &http.Cookie{Name: sessionCookie, Value: strings.Repeat("A", maxCookieBytes+1)}
	// The form's sealed ticket replayed as a session cookie.
	ticketAsSession := &http.Cookie{Name: sessionCookie, Value: formCookie.Value}

	before := f.versions(t)
	signedIn := []*http.Cookie{s}
	form := func(v url.Values) string { return v.Encode() }
	app := "/applications/" + f.ns + "/shop"
	expired := "/sign-in?expired=1"
	noSecrets := []string{secretValue, base64.StdEncoding.EncodeToString([]byte(secretValue))}

	tests := []hostileRequest{
		// Path traversal: the static files are an embedded directory, the
		// pages are routes; neither reaches anything else.
		{name: "static dot-dot", method: "GET", path: "/static/../console.go", status: http.StatusNotFound,
			notWant: []string{"package console"}},
		{name: "static encoded dot-dot", method: "GET", path: "/static/%2e%2e/console.go", status: http.StatusNotFound,
			notWant: []string{"package console"}},
		{name: "static encoded slash dot-dot", method: "GET", path: "/static/..%2fconsole.go", status: http.StatusNotFound,
			notWant: []string{"package console"}},
		{name: "static template by dot-dot", method: "GET", path: "/static/../templates/layout.html", status: http.StatusNotFound,
			notWant: []string{"{{define"}},
		{name: "static directory listing", method: "GET", path: "/static/", status: http.StatusNotFound,
			notWant: []string{`href="console.css"`}},
		{name: "missing static file", method: "GET", path: "/static/missing.css", status: http.StatusNotFound},
		{name: "static range past the end", method: "GET", path: "/static/console.css",
			header: map[string]string{"Range": "bytes=99999999-"}, status: http.StatusOK, want: []string{"font-family: system-ui"}},
		{name: "page path dot-dot to secrets", method: "GET", path: app + "/../../../api/v1/namespaces/" + f.ns + "/secrets",
			cookies: signedIn, status: http.StatusNotFound},
		// The router passes this name still percent-encoded; the console
		// decodes it and refuses it as a name before reading anything.
		{name: "page path encoded dot-dot", method: "GET", path: "/applications/" + f.ns + "/%2e%2e%2f%2e%2e%2fsecrets",
			cookies: signedIn, status: http.StatusBadRequest,
			want: []string{"the name &#34;../../secrets&#34; in the path is not an Application name"}},
		{name: "double slash host-like path", method: "GET", path: "//evil.example/applications", cookies: signedIn,
			status: http.StatusNotFound},

		// Names that are not Kubernetes names are refused before anything
		// is read (400), naming the parameter; an echo of them is escaped
		// and clipped.
		{name: "script as the Application name", method: "GET", path: "/applications/" + f.ns + "/%3Cscript%3Ealert(3)%3C%2Fscript%3E",
			cookies: signedIn, status: http.StatusBadRequest, want: []string{"in the path is not an Application name"},
			notWant: []string{"<script"}},
		{name: "script as the Application namespace", method: "GET", path: "/applications/%3Cb%3Eowned/shop",
			cookies: signedIn, status: http.StatusBadRequest,
			want: []string{"the namespace &#34;&lt;b&gt;owned&#34; in the path is not a namespace name"}, notWant: []string{"<b>"}},
		{name: "script as the namespace filter", method: "GET", path: "/applications?namespace=" + url.QueryEscape("<script>alert(4)</script>"),
			cookies: signedIn, status: http.StatusBadRequest, want: []string{"namespace &#34;&lt;script&gt;alert(4)", "is not a namespace name"},
			notWant: []string{"<script"}},
		{name: "markup as the namespace filter", method: "GET", path: "/revisions?namespace=" + url.QueryEscape(`"><b>owned`),
			cookies: signedIn, status: http.StatusBadRequest, want: []string{"is not a namespace name"}, notWant: []string{"<b>"}},
		{name: "huge namespace filter", method: "GET", path: "/repositories?namespace=" + strings.Repeat("a", 100000),
			cookies: signedIn, status: http.StatusBadRequest, want: []string{"must be no more than 63 characters"},
			notWant: []string{strings.Repeat("a", echoRunes+1)}},
		{name: "dot-dot as the namespace filter", method: "GET", path: "/applications?namespace=..",
			cookies: signedIn, status: http.StatusBadRequest, want: []string{"namespace &#34;..&#34; is not a namespace name"}},
		{name: "label selector injected as the application filter", method: "GET",
			path:    "/revisions?namespace=" + f.ns + "&application=" + url.QueryEscape("shop,"+syncv1.ApplicationLabel+"!=x"),
			cookies: signedIn, status: http.StatusBadRequest, want: []string{"is not an Application name"}},
		{name: "huge application filter", method: "GET", path: "/revisions?application=" + strings.Repeat("a", 10000),
			cookies: signedIn, status: http.StatusBadRequest, want: []string{"is not an Application name"}},
		{name: "state filter on Revisions", method: "GET", path: "/revisions?state=Failed", cookies: signedIn,
			status: http.StatusBadRequest, want: []string{"Revisions have no state filter"}},

		// Paging out of range or garbage.
		// The API server refuses a continue token it did not issue; the
		// console answers that as the person's mistake.
		{name: "garbage continue token", method: "GET", path: "/applications?continue=" + url.QueryEscape("garbage<b>"), cookies: signedIn,
			status: http.StatusBadRequest, want: []string{"is not a paging token the API server accepts"}, notWant: []string{"<b>"}},
		{name: "limit zero", method: "GET", path: "/applications?limit=0", cookies: signedIn, status: http.StatusBadRequest,
			want: []string{"not a number from 1 to 1000"}},
		{name: "limit negative", method: "GET", path: "/applications?limit=-1", cookies: signedIn, status: http.StatusBadRequest,
			want: []string{"not a number from 1 to 1000"}},
		{name: "limit above the maximum", method: "GET", path: "/revisions?limit=1001", cookies: signedIn, status: http.StatusBadRequest,
			want: []string{"not a number from 1 to 1000"}},
		{name: "limit overflowing int64", method: "GET", path: "/repositories?limit=99999999999999999999", cookies: signedIn,
			status: http.StatusBadRequest, want: []string{"not a number from 1 to 1000"}},
		{name: "limit not a number", method: "GET", path: "/applications?limit=" + url.QueryEscape("1e3<b>"), cookies: signedIn,
			status: http.StatusBadRequest, want: []string{"not a number from 1 to 1000"}, notWant: []string{"<b>"}},

		// Open redirects: the console has no return parameter; it always
		// sends people to its own pages.
		{name: "sign-in with a next URL", method: "POST", path: "/sign-in?next=https://evil.example/&return_to=//evil.example",
			cookies: []*http.Cookie{formCookie}, body: form(url.Values{"csrf": {formCSRF}, "token": {viewerToken}}),
			status: http.StatusSeeOther, location: "/applications"},
		{name: "sign-in form with a next URL", method: "GET", path: "/sign-in?next=https://evil.example/", status: http.StatusOK,
			notWant: []string{"evil.example"}},
		{name: "page without a session and a next URL", method: "GET", path: "/applications?next=https://evil.example/",
			status: http.StatusSeeOther, location: "/sign-in"},
		{name: "sign-out with a next URL", method: "POST", path: "/sign-out?next=https://evil.example/",
			status: http.StatusSeeOther, location: "/sign-in"},

		// Cookies the console did not seal for this session.
		{name: "garbage session cookie", method: "GET", path: "/applications", cookies: []*http.Cookie{garbage},
			status: http.StatusSeeOther, location: expired},
		{name: "tampered session cookie", method: "GET", path: "/applications", cookies: []*http.Cookie{&tampered},
			status: http.StatusSeeOther, location: expired},
		{name: "session cookie of another console's key", method: "GET", path: app, cookies: []*http.Cookie{foreign},
			status: http.StatusSeeOther, location: expired},
		{name: "sign-in ticket replayed as a session", method: "GET", path: "/applications", cookies: []*http.Cookie{ticketAsSession},
			status: http.StatusSeeOther, location: expired},
		{name: "oversized session cookie", method: "GET", path: "/applications", cookies: []*http.Cookie{oversized},
			status: http.StatusSeeOther, location: expired},
		{name: "session cookie as the sign-in ticket", method: "POST", path: "/sign-in",
			cookies: []*http.Cookie{{Name: csrfCookie, Value: s.Value}}, body: form(url.Values{"csrf": {sessionCSRF}, "token": {viewerToken}}),
			status: http.StatusForbidden, want: []string{"did not come from this console"}},

		// Cross-site posts carry neither the console's cookies (SameSite)
		// nor its CSRF values.
		{name: "cross-origin sign-in without the form's cookie", method: "POST", path: "/sign-in",
			header: map[string]string{"Origin": "https://evil.example", "Referer": "https://evil.example/"},
			body:   form(url.Values{"csrf": {formCSRF}, "token": {viewerToken}}), status: http.StatusForbidden,
			want: []string{"did not come from this console"}},
		{name: "sign-in with a guessed CSRF value", method: "POST", path: "/sign-in", cookies: []*http.Cookie{formCookie},
			body: form(url.Values{"csrf": {"guessed"}, "token": {viewerToken}}), status: http.StatusForbidden,
			want: []string{"did not come from this console"}},
		{name: "sign-out without the session's CSRF value", method: "POST", path: "/sign-out", cookies: signedIn,
			header: map[string]string{"Origin": "https://evil.example"}, body: form(url.Values{"x": {"1"}}),
			status: http.StatusForbidden, want: []string{"did not come from this console"}},
		{name: "sign-out with the sign-in form's CSRF value", method: "POST", path: "/sign-out", cookies: signedIn,
			body: form(url.Values{"csrf": {formCSRF}}), status: http.StatusForbidden, want: []string{"did not come from this console"}},
		{name: "sign-out by GET", method: "GET", path: "/sign-out?csrf=" + sessionCSRF, cookies: signedIn,
			status: http.StatusMethodNotAllowed},

		// Writes, signed in, with a body that looks like an object.
		{name: "PUT an Application", method: "PUT", path: app, cookies: signedIn, body: `{"spec":{}}`,
			status: http.StatusMethodNotAllowed},
		{name: "PATCH an Application", method: "PATCH", path: app, cookies: signedIn, body: `{"metadata":{"annotations":{"x":"y"}}}`,
			status: http.StatusMethodNotAllowed},
		{name: "DELETE an Application", method: "DELETE", path: app, cookies: signedIn, status: http.StatusMethodNotAllowed},
		{name: "POST to approve", method: "POST", path: app + "/approve", cookies: signedIn, body: "digest=x",
			status: http.StatusMethodNotAllowed},
		{name: "POST the Revisions list", method: "POST", path: "/revisions", cookies: signedIn, body: "x=1",
			status: http.StatusMethodNotAllowed},
		{name: "method override header", method: "POST", path: app, cookies: signedIn,
			header: map[string]string{"X-HTTP-Method-Override": "GET"}, status: http.StatusMethodNotAllowed},

		{name: "rejected token holding script", method: "POST", path: "/sign-in", cookies: []*http.Cookie{formCookie},
			body:   form(url.Values{"csrf": {formCSRF}, "token": {"<script>alert(5)</script>"}}),
			status: http.StatusUnauthorized, want: []string{"does not accept this token"}, notWant: []string{"alert(5)"}},

		// Oversized sign-in forms are refused before the token is checked.
		{name: "oversized sign-in form", method: "POST", path: "/sign-in", cookies: []*http.Cookie{formCookie},
			body:   form(url.Values{"csrf": {formCSRF}, "token": {strings.Repeat("a", maxFormBytes)}}),
			status: http.StatusBadRequest, want: []string{"could not be read"}},
		{name: "oversized sign-out form", method: "POST", path: "/sign-out", cookies: signedIn,
			body:   form(url.Values{"csrf": {sessionCSRF}, "pad": {strings.Repeat("a", maxFormBytes)}}),
			status: http.StatusForbidden, want: []string{"did not come from this console"}},

		// A token anywhere but the sign-in form's body is not taken, and
		// is never echoed.
		{name: "token in the sign-in page's query", method: "GET", path: "/sign-in?token=" + url.QueryEscape(viewerToken),
			status: http.StatusOK},
		{name: "token in the sign-in post's query", method: "POST", path: "/sign-in?token=" + url.QueryEscape(viewerToken),
			cookies: []*http.Cookie{formCookie}, body: form(url.Values{"csrf": {formCSRF}}),
			status: http.StatusBadRequest, want: []string{"Paste a Kubernetes bearer token"}},
		{name: "token in a page's query", method: "GET", path: "/applications?token=" + url.QueryEscape(viewerToken),
			status: http.StatusSeeOther, location: "/sign-in"},
		{name: "token as an Authorization header", method: "GET", path: "/applications",
			header: map[string]string{"Authorization": "Bearer " + viewerToken}, status: http.StatusSeeOther, location: "/sign-in"},

		// Cluster values holding script render escaped.
		{name: "annotations holding script", method: "GET", path: app, cookies: signedIn, status: http.StatusOK,
			want:    []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;svg onload=alert(2)&gt;"},
			notWant: []string{"<script", "<svg onload"}},

		// Unknown pages still answer with the headers.
		{name: "unknown page", method: "GET", path: "/admin", cookies: signedIn, status: http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := f.send(t, tt)
			if resp.status != tt.status {
				t.Fatalf("%s %.120s: status %d, want %d:\n%.2000s", tt.method, tt.path, resp.status, tt.status, resp.body)
			}
			if got := resp.header.Get("Location"); got != tt.location {
				t.Errorf("Location %q, want %q", got, tt.location)
			}
			for _, w := range tt.want {
				if !strings.Contains(resp.body, w) {
					t.Errorf("answer lacks %q:\n%.2000s", w, resp.body)
				}
			}
			for _, w := range append(append(tt.notWant, noSecrets...), viewerToken) {
				if strings.Contains(withoutOwnScript(resp.body), w) {
					t.Errorf("answer holds %.40q", w)
				}
				for h, vs := range resp.header {
					for _, v := range vs {
						if strings.Contains(v, w) {
							t.Errorf("header %s holds %.40q", h, w)
						}
					}
				}
			}
			headers := map[string]string{"Content-Security-Policy": contentSecurityPolicy,
				"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY",
				"Referrer-Policy": "no-referrer", "Cache-Control": "no-store"}
			for h, want := range headers {
				if got := resp.header.Get(h); got != want {
					t.Errorf("%s: %q, want %q", h, got, want)
				}
			}
		})
	}

	after := f.versions(t)
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s changed: resourceVersion %s -> %q", k, v, after[k])
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("%s appeared during the hostile requests", k)
		}
	}
	t.Logf("%d hostile requests; %d objects of namespace %s unchanged", len(tests), len(before), f.ns)
	// The session the hostile sign-out posts targeted still works.
	if resp := f.do(http.MethodGet, "/applications", signedIn, nil); resp.status != http.StatusOK {
		t.Errorf("after the forged sign-outs the session answers %d, want 200", resp.status)
	}
}
