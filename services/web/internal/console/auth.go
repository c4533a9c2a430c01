package console

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"
	"time"
)

const (
	sessionCookie = "kuvryn_console_session"
	csrfCookie    = "kuvryn_console_csrf"
	// signInFormTTL is how long a sign-in form stays valid.
	signInFormTTL = 30 * time.Minute
	// maxFormBytes bounds a sign-in or sign-out form; a token is a few KiB.
	maxFormBytes = 64 << 10
)

type sessionKey struct{}

// requireSession sends people without a valid session to the sign-in page
// and gives the rest a context whose reads carry their token.
func (c *Console) requireSession(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ck, err := r.Cookie(sessionCookie)
		if err != nil {
			http.Redirect(w, r, "/sign-in", http.StatusSeeOther)
			return
		}
		s, err := c.sealer.openSession(ck.Value, c.now())
		if err != nil {
			c.clearCookie(w, sessionCookie)
			http.Redirect(w, r, "/sign-in?expired=1", http.StatusSeeOther)
			return
		}
		ctx := context.WithValue(asUser(r.Context(), s.Token), sessionKey{}, s)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

func sessionFrom(ctx context.Context) session {
	s, _ := ctx.Value(sessionKey{}).(session)
	return s
}

type signInPage struct {
	Frame
	CSRF    string
	Error   string
	Expired bool
	// OIDC names the issuer of the "Sign in with" button; empty, none.
	OIDC string
}

// signInForm shows the token form with a fresh CSRF nonce, sealed into a
// cookie the form must match.
func (c *Console) signInForm(w http.ResponseWriter, r *http.Request) {
	c.showSignIn(w, r, http.StatusOK, "")
}

func (c *Console) showSignIn(w http.ResponseWriter, r *http.Request, status int, problem string) {
	nonce, err := randomString()
	if err == nil {
		err = c.setCookie(w, csrfCookie, csrfTicket{Nonce: nonce, Expires: c.now().Add(signInFormTTL).Unix()}, signInFormTTL)
	}
	if err != nil {
		c.fail(w, err)
		return
	}
	page := signInPage{CSRF: nonce, Error: problem, Expired: r.URL.Query().Get("expired") != ""}
	if c.oidc != nil {
		page.OIDC = c.oidc.o.Name
	}
	c.render(w, status, "signin.html", page)
}

// signIn checks the form's CSRF nonce, then the token with a TokenReview,
// and seals the token into the session cookie. The token is never logged
// and never put in a URL.
func (c *Console) signIn(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		c.showSignIn(w, r, http.StatusBadRequest, "The sign-in form could not be read; sign in again.")
		return
	}
	if !c.csrfValid(r) {
		c.showSignIn(w, r, http.StatusForbidden, "The sign-in form expired or did not come from this console; sign in again.")
		return
	}
	token := strings.TrimSpace(r.PostForm.Get("token"))
	if token == "" {
		c.showSignIn(w, r, http.StatusBadRequest, "Paste a Kubernetes bearer token, such as one from `kubectl create token`.")
		return
	}
	user, ok := c.review(w, r, token, "The API server does not accept this token: it is wrong, expired or revoked.")
	if !ok {
		return
	}
	if err := c.startSession(w, token, user, c.now().Add(c.ttl)); err != nil {
		c.fail(w, err)
		return
	}
	c.log.Info("signed in", "user", user)
	http.Redirect(w, r, "/applications", http.StatusSeeOther)
}

// review returns the user token authenticates as, by a TokenReview; when
// the API server does not accept it, it has answered the sign-in page
// saying notAccepted.
func (c *Console) review(w http.ResponseWriter, r *http.Request, token, notAccepted string) (string, bool) {
	user, err := c.reviewer.review(r.Context(), token)
	if errors.Is(err, errNotAuthenticated) {
		c.showSignIn(w, r, http.StatusUnauthorized, notAccepted)
		return "", false
	}
	if err != nil {
		c.log.Error(err, "checking a sign-in token with a TokenReview")
		c.showSignIn(w, r, http.StatusServiceUnavailable, "The API server could not check the token; try again shortly.")
		return "", false
	}
	return user, true
}

// startSession seals token into the session cookie until expires and
// drops the sign-in form's cookie.
func (c *Console) startSession(w http.ResponseWriter, token, user string, expires time.Time) error {
	csrf, err := randomString()
	if err != nil {
		return err
	}
	if err := c.setCookie(w, sessionCookie, session{Token: token, User: user, CSRF: csrf, Expires: expires.Unix()}, expires.Sub(c.now())); err != nil {
		return err
	}
	c.clearCookie(w, csrfCookie)
	return nil
}

// csrfValid: the form's nonce equals the one sealed in the form's cookie.
func (c *Console) csrfValid(r *http.Request) bool {
	ck, err := r.Cookie(csrfCookie)
	if err != nil {
		return false
	}
	t, err := c.sealer.openTicket(ck.Value, c.now())
	if err != nil {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(t.Nonce), []byte(r.PostForm.Get("csrf"))) == 1
}

// signOut drops the session cookie; the form carries the session's CSRF
// value, so another site cannot sign a person out.
func (c *Console) signOut(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	ck, err := r.Cookie(sessionCookie)
	if err != nil {
		http.Redirect(w, r, "/sign-in", http.StatusSeeOther)
		return
	}
	s, err := c.sealer.openSession(ck.Value, c.now())
	if err == nil && (r.ParseForm() != nil ||
		subtle.ConstantTimeCompare([]byte(s.CSRF), []byte(r.PostForm.Get("csrf"))) != 1) {
		c.render(w, http.StatusForbidden, "message.html", messagePage{Title: "Not signed out",
			Message: "The sign-out form did not come from this console."})
		return
	}
	c.clearCookie(w, sessionCookie)
	http.Redirect(w, r, "/sign-in", http.StatusSeeOther)
}

func (c *Console) setCookie(w http.ResponseWriter, name string, v any, ttl time.Duration) error {
	value, err := c.sealer.seal(name, v)
	if err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: "/", MaxAge: int(ttl.Seconds()),
		HttpOnly: true, Secure: true, SameSite: http.SameSiteStrictMode})
	return nil
}

func (c *Console) clearCookie(w http.ResponseWriter, name string) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: true, SameSite: http.SameSiteStrictMode})
}

func (c *Console) fail(w http.ResponseWriter, err error) {
	c.log.Error(err, "serving a console page")
	c.render(w, http.StatusInternalServerError, "message.html", messagePage{Title: "Console error",
		Message: "The console failed to answer; its log says why."})
}
