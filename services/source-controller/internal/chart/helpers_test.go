package chart

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	helmchart "helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"

	testchart "github.com/kuvryn/kuvryn-sync/pkg/testkit/chart"
	testregistry "github.com/kuvryn/kuvryn-sync/pkg/testkit/registry"
)

var testCreds = &Credentials{Username: "robot", Password: "s3cret-registry-password"}

// packageChart builds a chart archive the way `helm package` does. extra
// adds files, e.g. incompressible padding for size limits.
func packageChart(t *testing.T, name, version string, extra map[string][]byte) []byte {
	t.Helper()
	ch := &helmchart.Chart{
		Metadata: &helmchart.Metadata{APIVersion: helmchart.APIVersionV2, Name: name, Version: version, Type: "application"},
		Templates: []*helmchart.File{{
			Name: "templates/configmap.yaml",
			Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  version: " + version + "\n"),
		}},
	}
	for n, data := range extra {
		ch.Files = append(ch.Files, &helmchart.File{Name: n, Data: data})
	}
	path, err := chartutil.Save(ch, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// bombArchive is a valid chart archive of a few KiB that unpacks to size bytes.
func bombArchive(t *testing.T, name, version string, size int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	chartYAML := []byte("apiVersion: v2\nname: " + name + "\nversion: " + version + "\n")
	for _, f := range []struct {
		name string
		size int64
		body io.Reader
	}{
		{name + "/Chart.yaml", int64(len(chartYAML)), bytes.NewReader(chartYAML)},
		{name + "/files/zeros", size, io.LimitReader(zeroReader{}, size)},
	} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: f.size}); err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(tw, f.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// counter counts requests and remembers the Authorization headers it saw.
type counter struct {
	n    atomic.Int64
	mu   sync.Mutex
	auth []string
}

func (c *counter) wrap(creds *Credentials, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.n.Add(1)
		c.mu.Lock()
		c.auth = append(c.auth, r.Header.Get("Authorization"))
		c.mu.Unlock()
		if creds != nil {
			if u, p, ok := r.BasicAuth(); !ok || u != creds.Username || p != creds.Password {
				w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (c *counter) requests() int64 { return c.n.Load() }

func (c *counter) sawAuthorization() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, a := range c.auth {
		if a != "" {
			return true
		}
	}
	return false
}

// ociRegistry is the test kit's OCI registry on loopback, requiring creds
// when they are set.
type ociRegistry struct{ *testregistry.Registry }

func newOCIRegistry(t *testing.T, creds *Credentials) *ociRegistry {
	t.Helper()
	var opts testregistry.Options
	if creds != nil {
		opts.Username, opts.Password = creds.Username, creds.Password
	}
	return &ociRegistry{testregistry.Start(t, opts)}
}

// push uploads archive as charts/<name>:<version> with Helm's registry
// client, signing in with the registry's credentials.
func (r *ociRegistry) push(t *testing.T, name, version string, archive []byte) {
	t.Helper()
	if err := r.PushChart(archive, name, version); err != nil {
		t.Fatal(err)
	}
}

func (r *ociRegistry) requests() int64 { return r.Requests.Load() }

func (r *ociRegistry) ref(name, version string) Ref {
	return Ref{Repository: r.ChartRepository(), Name: name, Version: version, Insecure: true}
}

// chartRepo is the test kit's Helm repository over https, counting requests.
type chartRepo struct {
	*testchart.HelmRepository
	srv *httptest.Server
	counter
}

func newChartRepo(t *testing.T, creds *Credentials) *chartRepo {
	t.Helper()
	r := &chartRepo{}
	r.HelmRepository = testchart.StartHelmRepository(true, func(h http.Handler) http.Handler { return r.wrap(creds, h) })
	t.Cleanup(r.Close)
	r.srv = r.Server()
	return r
}

func (r *chartRepo) serve(path string, data []byte) { r.Serve(path, data) }

// indexEntry is one chart version in an index.yaml.
type indexEntry struct {
	name, version, url string
	archive            []byte
	digest             string
}

// publish serves index.yaml under /stable listing entries; an entry whose
// url is relative is served below /stable.
func (r *chartRepo) publish(t *testing.T, entries ...indexEntry) {
	t.Helper()
	kit := make([]testchart.Entry, 0, len(entries))
	for _, e := range entries {
		kit = append(kit, testchart.Entry{Name: e.name, Version: e.version, URL: e.url, Archive: e.archive, Digest: e.digest})
	}
	if err := r.Publish("/stable", kit...); err != nil {
		t.Fatal(err)
	}
}

func (r *chartRepo) ref(name, version string) Ref {
	return Ref{Repository: r.srv.URL + "/stable", Name: name, Version: version}
}

func (r *chartRepo) puller(t *testing.T) *Puller {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(r.srv.Certificate())
	return &Puller{Dir: t.TempDir(), RootCAs: pool}
}

func cachedArchives(t *testing.T, dir string) []string {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(dir, "*"+archiveSuffix))
	if err != nil {
		t.Fatal(err)
	}
	return matches
}

func mustPull(t *testing.T, p *Puller, ref Ref, namespace string, creds *Credentials) *Pulled {
	t.Helper()
	pulled, err := p.Pull(context.Background(), ref, namespace, creds)
	if err != nil {
		t.Fatalf("Pull(%+v, %q): %v", ref, namespace, err)
	}
	return pulled
}
