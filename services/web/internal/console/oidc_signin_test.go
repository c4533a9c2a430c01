package console

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/controlplane"
)

const oidcClientID = "kuvryn-console"

// oidcControlPlane starts a second control plane whose API server trusts
// iss through a structured AuthenticationConfiguration: users are oidc:
// and the email claim, groups oidc: and the groups claim. It returns once
// the API server accepts iss's ID tokens. It costs some 10 s, so only
// the OIDC test starts it.
func oidcControlPlane(t *testing.T, iss *testIssuer) (*controlplane.ControlPlane, client.Client) {
	t.Helper()
	authn, err := json.Marshal(map[string]any{
		"apiVersion": "apiserver.config.k8s.io/v1",
		"kind":       "AuthenticationConfiguration",
		"jwt": []any{map[string]any{
			"issuer": map[string]any{"url": iss.URL, "audiences": []string{oidcClientID}, "certificateAuthority": string(iss.CA)},
			"claimMappings": map[string]any{
				"username": map[string]any{"claim": "email", "prefix": "oidc:"},
				"groups":   map[string]any{"claim": "groups", "prefix": "oidc:"},
			},
		}},
	})
	must(t, err)
	file := filepath.Join(t.TempDir(), "authentication-config.json")
	must(t, os.WriteFile(file, authn, 0o600))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ocp, err := controlplane.Start(ctx, controlplane.Options{APIServerFlags: map[string]string{"authentication-config": file}})
	must(t, err)
	t.Cleanup(func() { _ = ocp.Stop() })
	oadmin, err := client.New(ocp.Config, client.Options{Scheme: manager.Scheme()})
	must(t, err)
	must(t, installRoles(ctx, oadmin))
	cs, err := kubernetes.NewForConfig(ocp.Config)
	must(t, err)
	// The API server reads the issuer's keys in the background after it starts.
	probe := iss.idToken(idClaims{Email: "probe@example.com"}, "")
	for {
		tr, err := cs.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: probe}}, metav1.CreateOptions{})
		if err == nil && tr.Status.Authenticated {
			if tr.Status.User.Username != "oidc:probe@example.com" {
				t.Fatalf("the API server maps the ID token to %q", tr.Status.User.Username)
			}
			return ocp, oadmin
		}
		if ctx.Err() != nil {
			t.Fatalf("the API server does not accept the issuer's ID tokens: %v %+v", err, tr)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// browserClient follows redirects and keeps cookies like a browser, and
// trusts the issuers' certificates.
func browserClient(t *testing.T, follow bool, issuers ...*testIssuer) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	must(t, err)
	pool := x509.NewCertPool()
	for _, iss := range issuers {
		pool.AppendCertsFromPEM(iss.CA)
	}
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	if !follow {
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	return c
}

// get reads u with c: status, body and where the redirects ended.
func get(t *testing.T, c *http.Client, u string) (int, string, *url.URL) {
	t.Helper()
	resp, err := c.Get(u)
	must(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must(t, err)
	return resp.StatusCode, string(b), resp.Request.URL
}

// callbackURL starts a sign-in with c and walks to the issuer, returning
// the URL the issuer sends the browser back to.
func callbackURL(t *testing.T, c *http.Client, console string) *url.URL {
	t.Helper()
	resp, err := c.Get(console + oidcStartPath)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("GET %s: %d", oidcStartPath, resp.StatusCode)
	}
	to, err := resp.Location()
	must(t, err)
	resp, err = c.Get(to.String())
	must(t, err)
	resp.Body.Close()
	back, err := resp.Location()
	must(t, err)
	return back
}

// TestOIDCSignIn_ReadsAsThePersonTheIssuerSignedIn: "Sign in with" runs
// the authorization-code flow with PKCE against an issuer on loopback, the
// console reads with the ID token, and the API server, trusting the same
// issuer, authorizes the person by their own name and groups. A state
// that differs, an answer without this browser's flow cookie (its PKCE
// verifier) and an ID token from another issuer are refused.
func TestOIDCSignIn_ReadsAsThePersonTheIssuerSignedIn(t *testing.T) {
	iss := newTestIssuer(t, oidcClientID, "console-s3cret")
	other := newTestIssuer(t, oidcClientID, "other-s3cret")
	ocp, oadmin := oidcControlPlane(t, iss)
	ctx := context.Background()
	for _, ns := range []string{"payments", "billing"} {
		must(t, oadmin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
		must(t, oadmin.Create(ctx, &syncv1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ns + "-api"},
			Spec: syncv1.ApplicationSpec{Source: syncv1.ApplicationSource{RepositoryRef: syncv1.LocalObjectReference{Name: "platform"}}}}))
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "payments", Name: "payments-team"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "kuvryn-sync-viewer"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "oidc:payments-team"}}}
	must(t, oadmin.Create(ctx, rb))

	var handler http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	// The console is localhost, the issuer 127.0.0.1: two sites, as in a
	// real installation, so the browser treats the issuer's answer as a
	// navigation from another site.
	console := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	c := newConsole(t, ocp, &OIDCOptions{IssuerURL: iss.URL, ClientID: oidcClientID, ClientSecret: "console-s3cret",
		RedirectURL: console + OIDCCallbackPath, CAFile: iss.CAFile, Scopes: []string{"openid", "email", "groups"}, Name: "Test IdP"})
	handler = c.Handler()

	if status, body, _ := get(t, browserClient(t, true), console+"/sign-in"); status != http.StatusOK ||
		!strings.Contains(body, `<a id="oidc" class="button" href="/sign-in/oidc">Sign in with Test IdP</a>`) {
		t.Fatalf("the sign-in page has no Sign in with Test IdP button: %d\n%s", status, body)
	}

	t.Run("a person the API server authorizes", func(t *testing.T) {
		tests := []struct {
			name string
			user idClaims
			// reads maps namespaces to the status reading their Applications answers.
			reads map[string]int
		}{
			{"alice in payments-team", idClaims{Email: "alice@example.com", Groups: []string{"payments-team"}},
				map[string]int{"payments": http.StatusOK, "billing": http.StatusForbidden}},
			{"bob in no team", idClaims{Email: "bob@example.com"},
				map[string]int{"payments": http.StatusForbidden, "billing": http.StatusForbidden}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				iss.signInAs(tt.user)
				before := iss.redeemedWithPKCE()
				b := browserClient(t, true, iss)
				status, body, at := get(t, b, console+oidcStartPath)
				user := "oidc:" + tt.user.Email
				if status != http.StatusOK || at.Path != OIDCCallbackPath || !strings.Contains(body, `<span id="user">`+user+`</span>`) {
					t.Fatalf("signing in ended on %s with %d:\n%s", at, status, body)
				}
				if iss.redeemedWithPKCE() != before+1 {
					t.Error("the console did not redeem the code with its PKCE verifier")
				}
				for _, ck := range b.Jar.Cookies(at) {
					if ck.Name == sessionCookie && strings.Count(ck.Value, ".") == 2 && strings.HasPrefix(ck.Value, "eyJ") {
						t.Error("the session cookie holds the ID token in the clear")
					}
				}
				for ns, want := range tt.reads {
					status, body, _ := get(t, b, console+"/applications?namespace="+ns)
					if status != want {
						t.Errorf("Applications in %s: %d, want %d:\n%s", ns, status, want, body)
					}
					if want == http.StatusOK && !strings.Contains(body, ns+"-api") {
						t.Errorf("Applications in %s lack %s-api:\n%s", ns, ns, body)
					}
					if want == http.StatusForbidden && (!strings.Contains(body, `id="refused"`) || !strings.Contains(body, user)) {
						t.Errorf("Applications in %s: no refusal page naming %s:\n%s", ns, user, body)
					}
				}
			})
		}
	})

	iss.signInAs(idClaims{Email: "alice@example.com", Groups: []string{"payments-team"}})
	t.Run("in chromium", func(t *testing.T) {
		// The issuer's certificate is its own CA, which chromium does not
		// know; certificate checks are the console's and the API server's,
		// tested above.
		ctx := browser(t, chromedp.Flag("ignore-certificate-errors", true))
		iss.showLoginPage(true)
		defer iss.showLoginPage(false)
		signIn, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		must(t, chromedp.Do(signIn,
			chromedp.Navigate(console+"/sign-in"),
			chromedp.Click(chromedp.ID("oidc")),
			chromedp.Click(chromedp.ID("approve")),
			// The way back is a navigation the issuer's page (another site)
			// starts: the flow cookie must be SameSite=Lax, and the Strict
			// session cookie is sent from the signed-in page's refresh on,
			// so the all-namespaces list is refused rather than asking to
			// sign in.
			chromedp.WaitVisible(chromedp.ID("refused")),
		))
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("user")))
		must(t, err)
		if s != "oidc:alice@example.com" {
			t.Errorf("signed in as %q", s)
		}
		must(t, chromedp.Do(ctx, chromedp.Navigate(console+"/applications?namespace=payments"), chromedp.WaitVisible(chromedp.ID("applications"))))
		if s, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("applications"))); err != nil || !strings.Contains(s, "payments-api") {
			t.Errorf("the Applications of payments: %q, %v", s, err)
		}
		screenshot(t, ctx, filepath.Join(t.TempDir(), "oidc-applications.png"))
	})
	refused := func(t *testing.T, b *http.Client, u string, status int, says string) {
		t.Helper()
		got, body, _ := get(t, b, u)
		if got != status || !strings.Contains(body, says) {
			t.Errorf("GET %s: %d, want %d saying %q:\n%s", u, got, status, says, body)
		}
		if got, _, at := get(t, b, console+"/applications?namespace=payments"); got != http.StatusOK || at.Path != "/sign-in" {
			t.Errorf("after a refused sign-in, /applications ended on %s with %d: signed in", at, got)
		}
	}
	t.Run("state differs", func(t *testing.T) {
		b := browserClient(t, false, iss)
		back := callbackURL(t, b, console)
		q := back.Query()
		q.Set("state", "forged-"+q.Get("state"))
		back.RawQuery = q.Encode()
		b.CheckRedirect = nil
		refused(t, b, back.String(), http.StatusForbidden, "state differs")
	})
	t.Run("no flow cookie, so no PKCE verifier", func(t *testing.T) {
		back := callbackURL(t, browserClient(t, false, iss), console)
		refused(t, browserClient(t, true, iss), back.String(), http.StatusForbidden, "did not start in this browser")
		// Nor does the issuer redeem the code without the verifier.
		resp, err := browserClient(t, false, iss).PostForm(iss.URL+"/token", url.Values{"grant_type": {"authorization_code"},
			"code": {back.Query().Get("code")}, "redirect_uri": {console + OIDCCallbackPath},
			"client_id": {oidcClientID}, "client_secret": {"console-s3cret"}})
		must(t, err)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("the code was redeemed without the PKCE verifier: %d", resp.StatusCode)
		}
	})
	t.Run("ID token from another issuer", func(t *testing.T) {
		iss.forgeWith(other)
		defer iss.forgeWith(nil)
		refused(t, browserClient(t, true, iss), console+oidcStartPath, http.StatusUnauthorized, "The ID token is not one Test IdP issued for this console")
		// Pasted as a token, the API server refuses it.
		b := browserClient(t, true, iss)
		_, form, _ := get(t, b, console+"/sign-in")
		m := csrfField.FindStringSubmatch(form)
		if m == nil {
			t.Fatalf("no CSRF field:\n%s", form)
		}
		resp, err := b.PostForm(console+"/sign-in", url.Values{"csrf": {m[1]}, "token": {other.idToken(idClaims{Email: "alice@example.com"}, "")}})
		must(t, err)
		body, err := io.ReadAll(resp.Body)
		must(t, err)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), "does not accept this token") {
			t.Errorf("a token of another issuer pasted: %d\n%s", resp.StatusCode, body)
		}
	})
}
