package console

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestSignIn_ChecksTheTokenWithATokenReview: only a token the API server
// accepts, sent with the form's own CSRF nonce, gives a session; the
// session cookie is HttpOnly, Secure, SameSite=Strict and does not hold the
// token in the clear.
func TestSignIn_ChecksTheTokenWithATokenReview(t *testing.T) {
	f := start(t)
	viewer := f.token("viewer", true)
	ck, csrf := f.signInForm()
	_, otherCSRF := f.signInForm()

	tests := []struct {
		name    string
		cookies []*http.Cookie
		form    url.Values
		status  int
		says    string
	}{
		{"viewer token", []*http.Cookie{ck}, url.Values{"csrf": {csrf}, "token": {viewer}}, http.StatusSeeOther, ""},
		{"token the API server rejects", []*http.Cookie{ck}, url.Values{"csrf": {csrf}, "token": {"not-a-token"}},
			http.StatusUnauthorized, "does not accept this token"},
		{"no token", []*http.Cookie{ck}, url.Values{"csrf": {csrf}, "token": {"  "}}, http.StatusBadRequest, "Paste a Kubernetes bearer token"},
		{"no CSRF cookie", nil, url.Values{"csrf": {csrf}, "token": {viewer}}, http.StatusForbidden, "did not come from this console"},
		{"CSRF field of another form", []*http.Cookie{ck}, url.Values{"csrf": {otherCSRF}, "token": {viewer}},
			http.StatusForbidden, "did not come from this console"},
		{"no CSRF field", []*http.Cookie{ck}, url.Values{"token": {viewer}}, http.StatusForbidden, "did not come from this console"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := f.do(http.MethodPost, "/sign-in", tt.cookies, tt.form)
			if resp.status != tt.status {
				t.Fatalf("status %d, want %d:\n%s", resp.status, tt.status, resp.body)
			}
			if !strings.Contains(resp.body, tt.says) {
				t.Errorf("page does not say %q:\n%s", tt.says, resp.body)
			}
			for _, h := range []string{"Location", "Set-Cookie"} {
				for _, v := range resp.header.Values(h) {
					if strings.Contains(v, viewer) {
						t.Errorf("%s header holds the token in the clear", h)
					}
				}
			}
			if strings.Contains(resp.body, viewer) {
				t.Error("the page holds the token")
			}
			if tt.status != http.StatusSeeOther {
				return
			}
			if loc := resp.header.Get("Location"); loc != "/applications" {
				t.Errorf("redirected to %q, want /applications", loc)
			}
			s := cookieNamed(t, resp, sessionCookie)
			if !s.HttpOnly || !s.Secure || s.SameSite != http.SameSiteStrictMode || s.MaxAge <= 0 {
				t.Errorf("session cookie HttpOnly=%v Secure=%v SameSite=%v MaxAge=%d; want HttpOnly, Secure, Strict, expiring",
					s.HttpOnly, s.Secure, s.SameSite, s.MaxAge)
			}
			page := f.do(http.MethodGet, "/applications", []*http.Cookie{s}, nil)
			if page.status != http.StatusOK || !strings.Contains(page.body, "system:serviceaccount:"+f.ns+":viewer") {
				t.Errorf("after signing in, /applications answered %d without the user's name:\n%s", page.status, page.body)
			}
		})
	}
}

// TestSignOut_EndsTheSessionOnlyFromTheConsole: signing out needs the
// session's CSRF value and clears the cookie; without a session every page
// sends people to sign in.
func TestSignOut_EndsTheSessionOnlyFromTheConsole(t *testing.T) {
	f := start(t)
	s := f.signIn(f.token("viewer", true))
	page := f.do(http.MethodGet, "/applications", []*http.Cookie{s}, nil)
	m := csrfField.FindStringSubmatch(page.body)
	if m == nil {
		t.Fatalf("no sign-out form on:\n%s", page.body)
	}

	if resp := f.do(http.MethodPost, "/sign-out", []*http.Cookie{s}, url.Values{"csrf": {"forged"}}); resp.status != http.StatusForbidden {
		t.Errorf("sign-out with a forged CSRF value: %d, want 403", resp.status)
	}
	resp := f.do(http.MethodPost, "/sign-out", []*http.Cookie{s}, url.Values{"csrf": {m[1]}})
	if resp.status != http.StatusSeeOther || resp.header.Get("Location") != "/sign-in" {
		t.Fatalf("sign-out: %d to %q, want 303 to /sign-in", resp.status, resp.header.Get("Location"))
	}
	if c := cookieNamed(t, resp, sessionCookie); c.MaxAge >= 0 || c.Value != "" {
		t.Errorf("sign-out left the session cookie: MaxAge=%d", c.MaxAge)
	}
	for _, path := range []string{"/", "/applications", "/applications/" + f.ns + "/x", "/repositories"} {
		if resp := f.do(http.MethodGet, path, nil, nil); resp.status != http.StatusSeeOther || resp.header.Get("Location") != "/sign-in" {
			t.Errorf("GET %s without a session: %d to %q, want 303 to /sign-in", path, resp.status, resp.header.Get("Location"))
		}
	}
}
