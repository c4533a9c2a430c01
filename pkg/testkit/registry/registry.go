// Package testregistry serves go-containerregistry's in-memory OCI registry
// on loopback for tests: images and Helm charts pushed into it, optionally
// behind basic auth, counting requests, and stopped and started again on
// the same address to play a registry that is down. It speaks plain HTTP,
// so clients pulling from it set insecure: true. It is a test kit: no
// service links it.
package testregistry

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	helmregistry "helm.sh/helm/v3/pkg/registry"
	"oras.land/oras-go/v2/registry/remote/auth"

	"github.com/kuvryn/kuvryn-sync/pkg/testkit/controlplane"
)

// Options configure a Registry. The zero value serves anonymous access.
type Options struct {
	// Username and Password, when Username is set, require HTTP basic auth
	// on every request; Push and PushChart sign in with them.
	Username string
	Password string
	// Wrap, when set, sees every request before the registry does, for
	// example to refuse some of them.
	Wrap func(http.Handler) http.Handler
}

// Registry is an in-memory OCI registry on a fixed loopback address. What
// was pushed survives Stop and Start.
type Registry struct {
	// Requests counts every request received, refused ones included.
	Requests atomic.Int64

	opts    Options
	addr    string
	handler http.Handler

	// mu guards srv, which is nil while stopped.
	mu  sync.Mutex
	srv *httptest.Server
}

// Start serves a registry until the test ends; it fails the test if the
// registry cannot start.
func Start(t testing.TB, opts Options) *Registry {
	t.Helper()
	r, err := New(opts)
	if err != nil {
		t.Fatalf("starting the test registry: %v", err)
	}
	t.Cleanup(r.Close)
	return r
}

// New starts serving a registry; Close stops it. Its port is one the kernel
// does not hand to outgoing connections, so that no client takes it while
// the registry is stopped.
func New(opts Options) (*Registry, error) {
	port, err := controlplane.FreePort()
	if err != nil {
		return nil, fmt.Errorf("reserving a port: %w", err)
	}
	r := &Registry{opts: opts, addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}
	h := ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0)))
	if opts.Wrap != nil {
		h = opts.Wrap(h)
	}
	r.handler = r.count(r.authorize(h))
	if err := r.Start(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *Registry) count(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.Requests.Add(1)
		next.ServeHTTP(w, req)
	})
}

func (r *Registry) authorize(next http.Handler) http.Handler {
	if r.opts.Username == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		u, p, ok := req.BasicAuth()
		if !ok || u != r.opts.Username || p != r.opts.Password {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, req)
	})
}

// Start serves again on the address Stop closed.
func (r *Registry) Start() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.srv != nil {
		return errors.New("the test registry is running")
	}
	l, err := net.Listen("tcp", r.addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", r.addr, err)
	}
	r.srv = &httptest.Server{Listener: l, Config: &http.Server{Handler: r.handler, ReadHeaderTimeout: 10 * time.Second}}
	r.srv.Start()
	return nil
}

// Stop closes the listener and every open connection, as a registry that
// went down would: clients get "connection refused" until Start.
func (r *Registry) Stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.srv != nil {
		r.srv.Close()
		r.srv = nil
	}
}

// Close stops the registry for good.
func (r *Registry) Close() { r.Stop() }

// Host is the registry's host:port, 127.0.0.1:<port>.
func (r *Registry) Host() string { return r.addr }

// Push writes a new random image under each tag of repo and returns the
// digests by tag.
func (r *Registry) Push(t testing.TB, repo string, tags ...string) map[string]v1.Hash {
	t.Helper()
	var opts []remote.Option
	if r.opts.Username != "" {
		opts = append(opts, remote.WithAuth(authn.FromConfig(authn.AuthConfig{Username: r.opts.Username, Password: r.opts.Password})))
	}
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
		if err := remote.Write(ref, img, opts...); err != nil {
			t.Fatalf("pushing %s: %v", ref, err)
		}
		if out[tag], err = img.Digest(); err != nil {
			t.Fatalf("digest of %s: %v", ref, err)
		}
	}
	return out
}

// ChartRepository is the spec.source.render.helm.chart.repository of the
// charts PushChart pushes, oci://127.0.0.1:<port>/charts.
func (r *Registry) ChartRepository() string { return "oci://" + r.Host() + "/charts" }

// PushChart uploads a chart archive as charts/<name>:<version> with Helm's
// registry client, as `helm push` does.
func (r *Registry) PushChart(archive []byte, name, version string) error {
	dir, err := os.MkdirTemp("", "kuvryn-registry-credentials-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	authorizer := auth.Client{Client: http.DefaultClient}
	if r.opts.Username != "" {
		authorizer.Credential = auth.StaticCredential(r.Host(), auth.Credential{Username: r.opts.Username, Password: r.opts.Password})
	}
	client, err := helmregistry.NewClient(
		helmregistry.ClientOptPlainHTTP(),
		helmregistry.ClientOptAuthorizer(authorizer),
		helmregistry.ClientOptCredentialsFile(filepath.Join(dir, "config.json")),
	)
	if err != nil {
		return err
	}
	if _, err := client.Push(archive, r.Host()+"/charts/"+name+":"+version); err != nil {
		return fmt.Errorf("pushing chart %s %s: %w", name, version, err)
	}
	return nil
}
