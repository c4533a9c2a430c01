// Package testregistry serves go-containerregistry's in-memory registry on
// loopback for tests, optionally behind basic auth, counting requests.
package testregistry

import (
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kuvryn/kuvryn-sync/pkg/testkit/controlplane"
)

// TB is the part of testing.TB the registry needs.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// Registry is an in-memory registry.
type Registry struct {
	srv  *httptest.Server
	host string
	// Requests counts every request received, refused ones included.
	Requests atomic.Int64
	user     string
	password string
}

// Start serves a registry until the test ends; a non-empty user requires
// basic auth with user and password on every request.
func Start(t TB, user, password string) *Registry {
	t.Helper()
	r := &Registry{user: user, password: password}
	r.srv = httptest.NewServer(r.handler())
	r.host = strings.TrimPrefix(r.srv.URL, "http://")
	t.Cleanup(r.srv.Close)
	return r
}

// Down returns a registry whose address is fixed but which refuses
// connections, as a registry that is down does, until Up is called.
func Down(t TB, user, password string) *Registry {
	t.Helper()
	port, err := controlplane.FreePort()
	if err != nil {
		t.Fatalf("reserving a port: %v", err)
	}
	host := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	return &Registry{host: host, user: user, password: password}
}

// Up starts serving a registry made by Down on its address, until the test
// ends.
func (r *Registry) Up(t TB) {
	t.Helper()
	l, err := net.Listen("tcp", r.host)
	if err != nil {
		t.Fatalf("listening on %s: %v", r.host, err)
	}
	r.srv = httptest.NewUnstartedServer(r.handler())
	r.srv.Listener = l
	r.srv.Start()
	t.Cleanup(r.srv.Close)
}

func (r *Registry) handler() http.Handler {
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.Requests.Add(1)
		if r.user != "" {
			u, p, ok := req.BasicAuth()
			if !ok || u != r.user || p != r.password {
				w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		reg.ServeHTTP(w, req)
	})
}

// Host is the registry's host:port.
func (r *Registry) Host() string { return r.host }

// Push writes a new random image under each tag of repo and returns the
// digests by tag.
func (r *Registry) Push(t TB, repo string, tags ...string) map[string]v1.Hash {
	t.Helper()
	out := map[string]v1.Hash{}
	for _, tag := range tags {
		img, err := random.Image(64, 1)
		if err != nil {
			t.Fatalf("building an image: %v", err)
		}
		ref, err := name.NewTag(r.Host() + "/" + repo + ":" + tag)
		if err != nil {
			t.Fatalf("tag %q: %v", tag, err)
		}
		var opts []remote.Option
		if r.user != "" {
			opts = append(opts, remote.WithAuth(authn.FromConfig(authn.AuthConfig{Username: r.user, Password: r.password})))
		}
		if err := remote.Write(ref, img, opts...); err != nil {
			t.Fatalf("pushing %s: %v", ref, err)
		}
		if out[tag], err = img.Digest(); err != nil {
			t.Fatalf("digest of %s: %v", ref, err)
		}
	}
	return out
}
