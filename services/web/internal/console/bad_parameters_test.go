package console

import (
	"context"
	"encoding/base64"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
)

// closedLoopbackPort is a loopback address nothing listens on: connecting
// to it is refused at once, a real failure with no fake server.
func closedLoopbackPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	addr := l.Addr().String()
	must(t, l.Close())
	return addr
}

// startWithUnreachableTwin is start, plus a second console sharing the
// first one's session key whose API server address is a closed loopback
// port; it returns the twin's URL. A session signed in on the first one
// works on the twin, and every read the twin sends fails to connect, so
// what the twin answers besides 502 it answered without sending anything.
func startWithUnreachableTwin(t *testing.T) (*fixture, string) {
	t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "console-"}}
	must(t, admin.Create(ctx, ns))
	t.Cleanup(func() { _ = admin.Delete(context.Background(), ns) })

	o := consoleOptions(t, cp)
	up, err := New(o)
	must(t, err)
	// The twin shares the real server's mapper and session key, so its
	// reads fail on the read itself, not on discovery or sign-in.
	o.Config = rest.CopyConfig(o.Config)
	o.Config.Host = "https://" + closedLoopbackPort(t)
	o.Log = ctrl.Log.WithName("console-unreachable")
	down, err := New(o)
	must(t, err)

	upSrv, downSrv := httptest.NewServer(up.Handler()), httptest.NewServer(down.Handler())
	t.Cleanup(upSrv.Close)
	t.Cleanup(downSrv.Close)
	return &fixture{t: t, ns: ns.Name, url: upSrv.URL, console: up}, downSrv.URL
}

// TestConsole_BadNameOrPagingTokenIsA400NamingTheParameter: a namespace or
// Application name in a page's path, a ?namespace= filter that is not a
// Kubernetes name, a ?limit= or ?application= out of its rule, and a
// ?continue= token the API server refuses are answered 400 with a message
// naming the parameter and the rule, escaped. Each case is also sent to a
// twin console whose API server is unreachable: a name refused there with
// 400 too was refused before any request was sent, while the continue
// token, which only the API server can judge, gets the twin's 502, as
// does every valid request. The names are checked by the API server's own
// rules: namespaces are DNS-1123 labels (no dots, at most 63 characters),
// Applications DNS-1123 subdomains (dots, at most 253).
func TestConsole_BadNameOrPagingTokenIsA400NamingTheParameter(t *testing.T) {
	f, twin := startWithUnreachableTwin(t)
	f.application("shop", nil, nil)
	s := f.signIn(f.token("viewer", true))
	// The bad-token cases need the API server to reach the token, past
	// RBAC; wait until the binding is seen.
	if resp := f.getOnceBound("/applications?namespace="+f.ns, s, http.StatusOK); resp.status != http.StatusOK {
		t.Fatalf("the viewer cannot read Applications: %d\n%s", resp.status, resp.body)
	}
	ns := f.ns
	long := func(n int) string { return strings.Repeat("a", n) }
	token := func(json string) string { return url.QueryEscape(base64.RawURLEncoding.EncodeToString([]byte(json))) }
	const (
		label     = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or &#39;-&#39;"
		subdomain = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, &#39;-&#39; or &#39;.&#39;"
		notServed = "The API server did not answer"
	)

	tests := []struct {
		name string
		path string
		// status is the answer of the console on the real API server,
		// twinStatus that of the twin whose API server is unreachable.
		status, twinStatus int
		want               []string
	}{
		// The namespace in the path.
		{"path namespace holding markup", "/applications/%3Cb%3Eowned/shop", 400, 400,
			[]string{"the namespace &#34;&lt;b&gt;owned&#34; in the path is not a namespace name: " + label}},
		{"path namespace holding a dot", "/applications/a.b/shop", 400, 400,
			[]string{"the namespace &#34;a.b&#34; in the path is not a namespace name: must not contain dots"}},
		{"path namespace of 64 characters", "/applications/" + long(64) + "/shop", 400, 400,
			[]string{"in the path is not a namespace name: must be no more than 63 characters"}},
		{"graph path namespace holding an encoded slash", "/applications/a%2Fb/shop/graph.svg", 400, 400,
			[]string{"the namespace &#34;a/b&#34; in the path is not a namespace name: " + label}},

		// The Application name in the path, which the router passes
		// percent-encoded when the path holds %2F or %2e.
		{"path name dot-dot", "/applications/" + ns + "/..", 400, 400,
			[]string{"the name &#34;..&#34; in the path is not an Application name: " + subdomain}},
		{"path name encoded traversal", "/applications/" + ns + "/%2e%2e%2f%2e%2e%2fsecrets", 400, 400,
			[]string{"the name &#34;../../secrets&#34; in the path is not an Application name: " + subdomain}},
		{"path name holding a percent sign", "/applications/" + ns + "/100%25", 400, 400,
			[]string{"the name &#34;100%&#34; in the path is not an Application name"}},
		{"path name in upper case", "/applications/" + ns + "/Shop", 400, 400,
			[]string{"the name &#34;Shop&#34; in the path is not an Application name: " + subdomain}},
		{"path name of 254 characters", "/applications/" + ns + "/" + long(254), 400, 400,
			[]string{"in the path is not an Application name: must be no more than 253 characters"}},
		{"graph path name holding script", "/applications/" + ns + "/%3Cscript%3Ealert(1)%3C%2Fscript%3E/graph.svg", 400, 400,
			[]string{"the name &#34;&lt;script&gt;alert(1)&lt;/script&gt;&#34; in the path is not an Application name"}},
		// A dotted name is an Application name: it is looked up.
		{"path name with dots is looked up", "/applications/" + ns + "/shop.v2", 404, 502,
			[]string{"There is no Application " + ns + "/shop.v2."}},
		// Escaped letters mean the letters: the Application is read.
		{"path name with escaped letters is decoded", "/applications/" + ns + "/%73hop%2e", 400, 400,
			[]string{"the name &#34;shop.&#34; in the path"}},
		{"path name with an escaped letter is read", "/applications/" + ns + "/%73hop", 200, 502, nil},

		// The ?namespace= filter of every list page.
		{"applications namespace filter dot-dot", "/applications?namespace=..", 400, 400,
			[]string{"namespace &#34;..&#34; is not a namespace name: " + label}},
		{"applications namespace filter holding a dot", "/applications?namespace=kube.system", 400, 400,
			[]string{"namespace &#34;kube.system&#34; is not a namespace name: must not contain dots"}},
		{"revisions namespace filter holding a percent sign", "/revisions?namespace=" + url.QueryEscape("a%2Fb"), 400, 400,
			[]string{"namespace &#34;a%2Fb&#34; is not a namespace name: " + label}},
		{"revisions namespace filter of 64 characters", "/revisions?namespace=" + long(64), 400, 400,
			[]string{"is not a namespace name: must be no more than 63 characters"}},
		{"repositories namespace filter holding script", "/repositories?namespace=" + url.QueryEscape("<script>x</script>"), 400, 400,
			[]string{"namespace &#34;&lt;script&gt;x&lt;/script&gt;&#34; is not a namespace name: " + label}},
		{"repositories namespace filter in upper case", "/repositories?namespace=Default", 400, 400,
			[]string{"namespace &#34;Default&#34; is not a namespace name: " + label}},

		// ?continue=: only the API server can judge its tokens, so the twin
		// sends them and fails to connect.
		{"applications garbage continue token", "/applications?continue=garbage", 400, 502,
			[]string{"continue &#34;garbage&#34; is not a paging token the API server accepts (invalid continue token: ",
				"start again from the first page"}},
		{"applications garbage continue token with a state filter", "/applications?state=Degraded&continue=garbage%3Cb%3E", 400, 502,
			[]string{"continue &#34;garbage&lt;b&gt;&#34; is not a paging token the API server accepts"}},
		{"revisions continue token stepping out of its list", "/revisions?continue=" + token(`{"v":"meta.k8s.io/v1","rv":2,"start":"../x"}`), 400, 502,
			[]string{"is not a paging token the API server accepts (invalid continue token: continue key is not valid: ../x)"}},
		{"repositories continue token of an unknown version", "/repositories?continue=" + token(`{"v":"v9","rv":2,"start":"x"}`), 400, 502,
			[]string{"is not a paging token the API server accepts (invalid continue token: continue key is not valid: server does not recognize this encoded version v9)"}},

		// ?limit= and ?application=, checked by the console alone.
		{"revisions limit zero", "/revisions?limit=0", 400, 400, []string{"limit &#34;0&#34; is not a number from 1 to 1000"}},
		{"repositories limit not a number", "/repositories?limit=ten", 400, 400, []string{"limit &#34;ten&#34; is not a number from 1 to 1000"}},
		{"revisions application filter holding a slash", "/revisions?application=a%2Fb", 400, 400,
			[]string{"application &#34;a/b&#34; is not an Application name"}},

		// Valid requests are read: a failure to reach the API server stays
		// a 502, on every page.
		{"applications in a namespace", "/applications?namespace=" + ns, 200, 502, nil},
		{"revisions", "/revisions?namespace=" + ns, 200, 502, nil},
		{"repositories", "/repositories?namespace=" + ns, 200, 502, nil},
		{"an application", "/applications/" + ns + "/shop", 200, 502, nil},
		{"an application's graph", "/applications/" + ns + "/shop/graph.svg", 200, 502, nil},
	}
	cookies := []*http.Cookie{s}
	var refusedUnsent int
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, c := range []struct {
				console string
				url     string
				status  int
			}{{"console", f.url, tt.status}, {"unreachable twin", twin, tt.twinStatus}} {
				resp := (&fixture{t: t, url: c.url}).send(t, hostileRequest{method: http.MethodGet, path: tt.path, cookies: cookies})
				if resp.status != c.status {
					t.Fatalf("%s: GET %.120s: %d, want %d:\n%.2000s", c.console, tt.path, resp.status, c.status, resp.body)
				}
				var want []string
				switch c.status {
				case http.StatusBadRequest:
					want = append([]string{"<h1>Bad request</h1>", `<p id="message">`}, tt.want...)
				case http.StatusBadGateway:
					want = []string{notServed}
				case http.StatusNotFound:
					want = tt.want
				}
				for _, w := range want {
					if !strings.Contains(resp.body, w) {
						t.Errorf("%s: answer lacks %q:\n%.2000s", c.console, w, resp.body)
					}
				}
				for _, w := range []string{"<script", "<b>"} {
					if strings.Contains(withoutOwnScript(resp.body), w) {
						t.Errorf("%s: answer holds %q", c.console, w)
					}
				}
				for h, want := range map[string]string{"Content-Security-Policy": contentSecurityPolicy,
					"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY",
					"Referrer-Policy": "no-referrer", "Cache-Control": "no-store"} {
					if got := resp.header.Get(h); got != want {
						t.Errorf("%s: %s: %q, want %q", c.console, h, got, want)
					}
				}
			}
			if tt.status == http.StatusBadRequest && tt.twinStatus == http.StatusBadRequest {
				refusedUnsent++
			}
		})
	}
	t.Logf("%d requests to each console; %d refused with 400 before any request to the API server", len(tests), refusedUnsent)
}
