package console

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"html/template"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/coreos/go-oidc/v3/oidc/oidctest"
)

// testIssuer is an OpenID Connect issuer on loopback, over TLS with its
// own self-signed CA: go-oidc's oidctest serves discovery and the keys, and
// it adds the authorization endpoint, which signs in whoever the test
// chose without a login form, and the token endpoint, which checks the
// client, the redirect URL and the PKCE verifier (S256).
type testIssuer struct {
	URL string
	// CAFile is the PEM file of the certificate its TLS serves.
	CAFile string
	// CA is that certificate's PEM.
	CA []byte

	clientID, secret string
	key              *rsa.PrivateKey

	mu    sync.Mutex
	user  idClaims
	codes map[string]grant
	// forger, when set, signs the ID tokens: its key, its issuer URL.
	forger *testIssuer
	// verified counts codes redeemed with the right PKCE verifier.
	verified int
	// loginPage makes the authorization endpoint answer a page with a
	// link back, as a real issuer's login form does, instead of a
	// redirect: the way back is then a navigation the issuer's page starts.
	loginPage bool
}

// idClaims is who signs in.
type idClaims struct {
	Email  string
	Groups []string
}

type grant struct {
	user                       idClaims
	nonce, challenge, redirect string
}

func newTestIssuer(t *testing.T, clientID, secret string) *testIssuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	must(t, err)
	iss := &testIssuer{clientID: clientID, secret: secret, key: key, codes: map[string]grant{}}
	keys := &oidctest.Server{PublicKeys: []oidctest.PublicKey{{PublicKey: key.Public(), KeyID: "test", Algorithm: oidc.RS256}}}
	mux := http.NewServeMux()
	mux.Handle("/", keys)
	mux.HandleFunc("GET /auth", iss.authorize)
	mux.HandleFunc("POST /token", iss.token)
	srv := httptest.NewTLSServer(mux)
	t.Cleanup(srv.Close)
	keys.SetIssuer(srv.URL)
	iss.URL = srv.URL
	iss.CA = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	iss.CAFile = filepath.Join(t.TempDir(), "issuer-ca.pem")
	must(t, os.WriteFile(iss.CAFile, iss.CA, 0o600))
	return iss
}

// signInAs makes the next authorizations sign in user.
func (iss *testIssuer) signInAs(user idClaims) {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	iss.user = user
}

// forgeWith makes the token endpoint hand out ID tokens other signed.
func (iss *testIssuer) forgeWith(other *testIssuer) {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	iss.forger = other
}

// showLoginPage sets whether the authorization endpoint answers a page.
func (iss *testIssuer) showLoginPage(on bool) {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	iss.loginPage = on
}

func (iss *testIssuer) redeemedWithPKCE() int {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	return iss.verified
}

// idToken is an ID token of iss for user, valid for an hour.
func (iss *testIssuer) idToken(user idClaims, nonce string) string {
	claims := map[string]any{"iss": iss.URL, "aud": iss.clientID, "sub": user.Email, "email": user.Email,
		"email_verified": true, "groups": user.Groups, "iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix()}
	if nonce != "" {
		claims["nonce"] = nonce
	}
	// Strings, numbers and a string slice always marshal.
	b, _ := json.Marshal(claims)
	return oidctest.SignIDToken(iss.key, "test", oidc.RS256, string(b))
}

func (iss *testIssuer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	switch {
	case q.Get("client_id") != iss.clientID:
		http.Error(w, "unknown client", http.StatusBadRequest)
		return
	case q.Get("response_type") != "code", q.Get("code_challenge_method") != "S256", q.Get("code_challenge") == "":
		http.Error(w, "want response_type=code with a S256 PKCE challenge", http.StatusBadRequest)
		return
	}
	code := rand.Text()
	iss.mu.Lock()
	iss.codes[code] = grant{user: iss.user, nonce: q.Get("nonce"), challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri")}
	page := iss.loginPage
	iss.mu.Unlock()
	back, err := url.Parse(q.Get("redirect_uri"))
	if err != nil {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	v := back.Query()
	v.Set("code", code)
	v.Set("state", q.Get("state"))
	back.RawQuery = v.Encode()
	if page {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = loginPage.Execute(w, back.String())
		return
	}
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (iss *testIssuer) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		tokenError(w, "invalid_request")
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if id != iss.clientID || subtle.ConstantTimeCompare([]byte(secret), []byte(iss.secret)) != 1 {
		w.Header().Set("WWW-Authenticate", "Basic")
		w.WriteHeader(http.StatusUnauthorized)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_client"})
		return
	}
	iss.mu.Lock()
	defer iss.mu.Unlock()
	code := r.PostForm.Get("code")
	g, ok := iss.codes[code]
	sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
	if !ok || r.PostForm.Get("grant_type") != "authorization_code" || r.PostForm.Get("redirect_uri") != g.redirect ||
		base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
		tokenError(w, "invalid_grant")
		return
	}
	delete(iss.codes, code)
	iss.verified++
	signer := iss
	if iss.forger != nil {
		signer = iss.forger
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": rand.Text(), "token_type": "Bearer", "expires_in": 3600,
		"id_token": signer.idToken(g.user, g.nonce)})
}

var loginPage = template.Must(template.New("login").Parse(
	`<!DOCTYPE html><html><body><h1>Test issuer</h1><a id="approve" href="{{.}}">Continue to the console</a></body></html>`))

func tokenError(w http.ResponseWriter, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code})
}
