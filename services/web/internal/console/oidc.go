package console

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
)

const (
	// oidcCookie carries one sign-in with the issuer: state, nonce and the
	// PKCE verifier, sealed, from the redirect to the issuer to its answer.
	oidcCookie = "kuvryn_console_oidc"
	// oidcFlowTTL is how long a person may take at the issuer's login.
	oidcFlowTTL = 10 * time.Minute
	// OIDCCallbackPath is where the issuer sends people back: the redirect
	// URL's path.
	OIDCCallbackPath = "/sign-in/oidc/callback"
	oidcStartPath    = "/sign-in/oidc"
)

// OIDCOptions configure the optional sign-in with an OpenID Connect issuer
// (authorization-code flow with PKCE). The API server must trust the same
// issuer and client ID (audience): the console reads with the ID token.
type OIDCOptions struct {
	// IssuerURL is the issuer, such as https://dex.example.com.
	IssuerURL string
	// ClientID is the console's client at the issuer and the ID token's
	// audience.
	ClientID string
	// ClientSecret is empty for a public client (PKCE alone).
	ClientSecret string
	// RedirectURL is the console's callback as the browser reaches it,
	// such as https://console.example.com/sign-in/oidc/callback.
	RedirectURL string
	// CAFile holds PEM certificates the issuer's TLS certificate chains to;
	// empty trusts the system's.
	CAFile string
	// Scopes to ask for; default openid, email, profile.
	Scopes []string
	// Name is shown on the button, "Sign in with <Name>"; default OIDC.
	Name string
}

// oidcLogin runs sign-ins with the issuer. The issuer is discovered on the
// first sign-in and then remembered, so the console starts and serves
// token sign-in while the issuer is down.
type oidcLogin struct {
	o      OIDCOptions
	client *http.Client

	mu       sync.Mutex
	provider *oidc.Provider
}

func newOIDCLogin(o OIDCOptions) (*oidcLogin, error) {
	u, err := url.Parse(o.IssuerURL)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("OIDC issuer URL %q: want an https:// URL, such as https://dex.example.com", o.IssuerURL)
	}
	if o.ClientID == "" {
		return nil, errors.New("OIDC client ID is empty: set the client the console is registered as at the issuer")
	}
	r, err := url.Parse(o.RedirectURL)
	if err != nil || (r.Scheme != "https" && r.Scheme != "http") || r.Host == "" || r.Path != OIDCCallbackPath {
		return nil, fmt.Errorf("OIDC redirect URL %q: want the console's address and the path %s, such as https://console.example.com%s",
			o.RedirectURL, OIDCCallbackPath, OIDCCallbackPath)
	}
	if len(o.Scopes) == 0 {
		o.Scopes = []string{oidc.ScopeOpenID, "email", "profile"}
	}
	if o.Name == "" {
		o.Name = "OIDC"
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("OIDC CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("OIDC CA file %s holds no PEM certificate", o.CAFile)
		}
		transport.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &oidcLogin{o: o, client: &http.Client{Transport: transport, Timeout: 30 * time.Second}}, nil
}

// context carries the issuer's HTTP client for go-oidc and oauth2.
func (l *oidcLogin) context(ctx context.Context) context.Context {
	return oidc.ClientContext(ctx, l.client)
}

// discover returns the issuer's provider, reading its discovery document
// with retries on the first call.
func (l *oidcLogin) discover(ctx context.Context) (*oidc.Provider, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.provider != nil {
		return l.provider, nil
	}
	// Every failure is retried: the issuer not answering yet looks the
	// same as one that answers badly, and the wait is bounded.
	backoff := wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Steps: 4}
	err := retry.OnError(backoff, func(error) bool { return ctx.Err() == nil }, func() error {
		p, err := oidc.NewProvider(l.context(ctx), l.o.IssuerURL)
		l.provider = p
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("discovering OIDC issuer %s: %w", l.o.IssuerURL, err)
	}
	return l.provider, nil
}

func (l *oidcLogin) config(p *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{ClientID: l.o.ClientID, ClientSecret: l.o.ClientSecret, RedirectURL: l.o.RedirectURL,
		Endpoint: p.Endpoint(), Scopes: l.o.Scopes}
}

// oidcStart sends the browser to the issuer with a fresh state, nonce and
// PKCE challenge (S256), remembering them in a sealed cookie.
func (c *Console) oidcStart(w http.ResponseWriter, r *http.Request) {
	p, err := c.oidc.discover(r.Context())
	if err != nil {
		c.log.Error(err, "starting an OIDC sign-in")
		c.showSignIn(w, r, http.StatusServiceUnavailable, fmt.Sprintf("%s cannot be reached; try again shortly, or sign in with a token.", c.oidc.o.Name))
		return
	}
	state, err := randomString()
	var nonce string
	if err == nil {
		nonce, err = randomString()
	}
	if err != nil {
		c.fail(w, err)
		return
	}
	verifier := oauth2.GenerateVerifier()
	value, err := c.sealer.seal(oidcCookie, oidcTicket{State: state, Nonce: nonce, Verifier: verifier,
		Expires: c.now().Add(oidcFlowTTL).Unix()})
	if err != nil {
		c.fail(w, err)
		return
	}
	// Lax, not Strict: the issuer's answer is a navigation from another
	// site, which must bring this cookie back.
	http.SetCookie(w, &http.Cookie{Name: oidcCookie, Value: value, Path: oidcStartPath, MaxAge: int(oidcFlowTTL.Seconds()),
		HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, c.oidc.config(p).AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)), http.StatusSeeOther)
}

// oidcCallback takes the issuer's answer: the state must be the one this
// browser's cookie holds, the code is exchanged with the PKCE verifier, the
// ID token must be the issuer's, for this client, with the nonce, and the
// API server must accept it. The ID token is then the session's token.
func (c *Console) oidcCallback(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: oidcCookie, Value: "", Path: oidcStartPath, MaxAge: -1,
		HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode})
	name := c.oidc.o.Name
	refuse := func(status int, msg string) { c.showSignIn(w, r, status, msg) }
	var t oidcTicket
	ck, err := r.Cookie(oidcCookie)
	if err == nil {
		t, err = c.sealer.openFlow(ck.Value, c.now())
	}
	if err != nil {
		refuse(http.StatusForbidden, fmt.Sprintf("This sign-in with %s did not start in this browser, or took longer than %s; sign in again.", name, oidcFlowTTL))
		return
	}
	q := r.URL.Query()
	if subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(t.State)) != 1 {
		refuse(http.StatusForbidden, fmt.Sprintf("The answer from %s does not belong to the sign-in this browser started (state differs); sign in again.", name))
		return
	}
	if e := q.Get("error"); e != "" {
		refuse(http.StatusUnauthorized, fmt.Sprintf("%s refused the sign-in: %s %s", name, e, q.Get("error_description")))
		return
	}
	if q.Get("code") == "" {
		refuse(http.StatusBadRequest, fmt.Sprintf("The answer from %s holds no authorization code; sign in again.", name))
		return
	}
	ctx := c.oidc.context(r.Context())
	p, err := c.oidc.discover(ctx)
	if err != nil {
		c.log.Error(err, "finishing an OIDC sign-in")
		refuse(http.StatusServiceUnavailable, fmt.Sprintf("%s cannot be reached; try again shortly.", name))
		return
	}
	tok, err := c.oidc.config(p).Exchange(ctx, q.Get("code"), oauth2.VerifierOption(t.Verifier))
	if err != nil {
		c.log.Error(err, "exchanging an OIDC authorization code", "issuer", c.oidc.o.IssuerURL)
		refuse(http.StatusUnauthorized, fmt.Sprintf("%s did not exchange the sign-in code for a token; the console's log says why.", name))
		return
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		refuse(http.StatusUnauthorized, fmt.Sprintf("%s answered without an ID token: ask for the openid scope.", name))
		return
	}
	id, err := p.VerifierContext(ctx, &oidc.Config{ClientID: c.oidc.o.ClientID}).Verify(ctx, raw)
	if err != nil {
		c.log.Info("refused an OIDC ID token", "issuer", c.oidc.o.IssuerURL, "reason", err.Error())
		refuse(http.StatusUnauthorized, fmt.Sprintf("The ID token is not one %s issued for this console: %v", name, err))
		return
	}
	if subtle.ConstantTimeCompare([]byte(id.Nonce), []byte(t.Nonce)) != 1 {
		refuse(http.StatusUnauthorized, fmt.Sprintf("The ID token from %s was not issued for this sign-in (nonce differs); sign in again.", name))
		return
	}
	user, ok := c.review(w, r, raw, fmt.Sprintf("The API server does not accept the ID token from %s: it must trust issuer %s with audience %s (see the console's troubleshooting).",
		name, c.oidc.o.IssuerURL, c.oidc.o.ClientID))
	if !ok {
		return
	}
	// The session ends when the ID token does: the API server refuses it then.
	expires := c.now().Add(c.ttl)
	if id.Expiry.Before(expires) {
		expires = id.Expiry
	}
	if err := c.startSession(w, raw, user, expires); err != nil {
		c.fail(w, err)
		return
	}
	c.log.Info("signed in", "user", user, "with", "oidc")
	// A page, not a redirect: after the issuer's cross-site navigation the
	// browser sends the SameSite=Strict session cookie only on a navigation
	// of this console's own.
	c.render(w, http.StatusOK, "signed-in.html", messagePage{Frame: Frame{User: user}, Title: "Signed in"})
}
