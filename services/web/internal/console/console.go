// Package console serves the read-only web console: people sign in with a
// Kubernetes bearer token, checked with a TokenReview, and every page is
// read with that token, so Kubernetes RBAC decides what each person sees.
// Nothing in the console writes to the cluster.
package console

import (
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// contentSecurityPolicy allows scripts only as the console's own files
// (static/live.js; no inline script, no eval), connections (the live
// updates' event stream and page fetches), styles and images only to and
// from the console, and forms posting only to it.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// Options configure New.
type Options struct {
	// Config is the web service's own config. Users' reads take only its
	// API server address and CA; its credentials create TokenReviews.
	Config *rest.Config
	// Mapper maps kinds to resources for users' reads.
	Mapper meta.RESTMapper
	// Key seals session cookies; KeySize bytes (see SessionKey).
	Key []byte
	// SessionTTL is how long a sign-in lasts; default 8h.
	SessionTTL time.Duration
	Log        logr.Logger
	// Now is the clock; default time.Now.
	Now func() time.Time
	// OIDC, when set, adds sign-in with an OpenID Connect issuer.
	OIDC *OIDCOptions
}

// Console is the console's HTTP handler.
type Console struct {
	users client.WithWatch
	// streams bounds the open live-update streams (live.go).
	streams chan struct{}
	// streamLifetime bounds one live-update stream; tests shorten it.
	streamLifetime time.Duration
	reviewer       reviewer
	sealer         *sealer
	oidc           *oidcLogin
	ttl            time.Duration
	log            logr.Logger
	now            func() time.Time
	pages          *template.Template
	handler        http.Handler
}

// New builds the console.
func New(o Options) (*Console, error) {
	if o.Config == nil || o.Mapper == nil {
		return nil, errors.New("console: Config and Mapper are required")
	}
	s, err := newSealer(o.Key)
	if err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	users, err := userClient(o.Config, o.Mapper)
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(o.Config)
	if err != nil {
		return nil, err
	}
	pages, err := parseTemplates()
	if err != nil {
		return nil, err
	}
	c := &Console{users: users, reviewer: reviewer{clientset: cs}, sealer: s, ttl: o.SessionTTL,
		log: o.Log, now: o.Now, pages: pages, streams: make(chan struct{}, maxStreams), streamLifetime: streamLifetime}
	if o.OIDC != nil {
		if c.oidc, err = newOIDCLogin(*o.OIDC); err != nil {
			return nil, fmt.Errorf("console: %w", err)
		}
	}
	if c.ttl <= 0 {
		c.ttl = 8 * time.Hour
	}
	if c.now == nil {
		c.now = time.Now
	}
	c.handler = c.routes()
	return c, nil
}

// Handler serves the console.
func (c *Console) Handler() http.Handler { return c.handler }

func (c *Console) routes() http.Handler {
	r := chi.NewRouter()
	r.Use(securityHeaders, readOnly, middleware.GetHead)
	r.Get("/static/*", c.staticFile)
	r.Get("/sign-in", c.signInForm)
	r.Post("/sign-in", c.signIn)
	r.Post("/sign-out", c.signOut)
	if c.oidc != nil {
		r.Get(oidcStartPath, c.oidcStart)
		r.Get(OIDCCallbackPath, c.oidcCallback)
	}
	r.Group(func(r chi.Router) {
		r.Use(c.requireSession)
		r.Get("/", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/applications", http.StatusSeeOther)
		})
		r.Get("/applications", c.applications)
		r.Get("/applications/events", c.applicationsEvents)
		r.Get("/applications/{namespace}/{name}", c.application)
		r.Get("/applications/{namespace}/{name}/events", c.applicationEvents)
		r.Get("/applications/{namespace}/{name}/graph.svg", c.liveGraph)
		r.Get("/revisions", c.revisions)
		r.Get("/repositories", c.repositories)
	})
	r.NotFound(c.notFound)
	return r
}

func (c *Console) notFound(w http.ResponseWriter, _ *http.Request) {
	c.render(w, http.StatusNotFound, "message.html", messagePage{Title: "Not found",
		Message: "There is no such page in the console."})
}

// staticFile serves an embedded asset whole, and answers a path naming none
// (a directory, "..", a missing file) with the console's own 404 page.
// Not http.FileServer: its error answers drop Cache-Control (net/http's
// serveError does, for every status it answers itself, 404 and 416
// included), and it lists directories. No Range or conditional requests:
// the assets are a few KiB and never cached.
func (c *Console) staticFile(w http.ResponseWriter, r *http.Request) {
	// r.URL.Path is decoded, so %2e%2e is ".." here and refused.
	name := strings.TrimPrefix(r.URL.Path, "/static/")
	if !fs.ValidPath(name) {
		c.notFound(w, r)
		return
	}
	data, err := fs.ReadFile(staticFS, "static/"+name)
	if err != nil {
		c.notFound(w, r)
		return
	}
	ct := mime.TypeByExtension(path.Ext(name))
	if ct == "" {
		ct = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data)
}

// securityHeaders sets what every answer carries: the CSP, no sniffing, no
// framing, no referrer, and no caching of pages read with someone's token.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// signInPaths are the only routes that take a POST: signing in and out
// change the browser's cookie, never the cluster.
var signInPaths = map[string]bool{"/sign-in": true, "/sign-out": true}

// readOnly answers 405 to every method but GET and HEAD, and POST on the
// sign-in and sign-out forms, on every path, known or not.
func readOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet || r.Method == http.MethodHead:
		case r.Method == http.MethodPost && signInPaths[r.URL.Path]:
		default:
			allow := "GET, HEAD"
			if signInPaths[r.URL.Path] {
				allow = "GET, HEAD, POST"
			}
			w.Header().Set("Allow", allow)
			http.Error(w, "The console is read-only: "+r.Method+" is not allowed.", http.StatusMethodNotAllowed)
			return
		}
		next.ServeHTTP(w, r)
	})
}
