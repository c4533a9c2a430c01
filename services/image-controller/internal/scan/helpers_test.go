package scan

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// testRegistry is go-containerregistry's in-memory registry on loopback,
// optionally behind basic auth, counting the requests it receives.
type testRegistry struct {
	srv      *httptest.Server
	requests atomic.Int64
	user     string
	password string
}

func startRegistry(t *testing.T, user, password string) *testRegistry {
	t.Helper()
	r := &testRegistry{user: user, password: password}
	reg := registry.New(registry.Logger(nullLogger()))
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.requests.Add(1)
		if r.user != "" {
			u, p, ok := req.BasicAuth()
			if !ok || u != r.user || p != r.password {
				w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		reg.ServeHTTP(w, req)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// host is the registry's host:port.
func (r *testRegistry) host() string { return strings.TrimPrefix(r.srv.URL, "http://") }

// push writes a new random image under each tag and returns its digests.
func (r *testRegistry) push(t *testing.T, repo string, tags ...string) map[string]v1.Hash {
	t.Helper()
	out := map[string]v1.Hash{}
	for _, tag := range tags {
		img, err := random.Image(64, 1)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := name.NewTag(r.host() + "/" + repo + ":" + tag)
		if err != nil {
			t.Fatal(err)
		}
		opts := []remote.Option{}
		if r.user != "" {
			opts = append(opts, remote.WithAuth(basic(r.user, r.password)))
		}
		if err := remote.Write(ref, img, opts...); err != nil {
			t.Fatalf("pushing %s: %v", ref, err)
		}
		if out[tag], err = img.Digest(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func sanitize(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

func nullLogger() *log.Logger { return log.New(io.Discard, "", 0) }
