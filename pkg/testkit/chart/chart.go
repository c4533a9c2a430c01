// Package chart serves Helm charts on loopback for tests from a classic Helm
// repository (index.yaml and archives), and builds chart archives; the OCI
// registry the guide names beside it is the registry kit's
// (pkg/testkit/registry). It is a test kit: no service links it.
package chart

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"sync"

	helmchart "helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/repo"
	"sigs.k8s.io/yaml"
)

// Wrap lets a test see or refuse requests before a server answers them,
// for example to count them or to require credentials.
type Wrap func(http.Handler) http.Handler

func wrapped(wrap Wrap, h http.Handler) http.Handler {
	if wrap == nil {
		return h
	}
	return wrap(h)
}

// HelmRepository serves files by URL path, index.yaml among them.
type HelmRepository struct {
	srv *httptest.Server

	mu    sync.Mutex
	files map[string][]byte
}

// StartHelmRepository starts a Helm repository, over TLS with the server's
// own certificate (see Certificate) when tls is set; Close stops it.
func StartHelmRepository(tls bool, wrap Wrap) *HelmRepository {
	r := &HelmRepository{files: map[string][]byte{}}
	h := wrapped(wrap, http.HandlerFunc(r.serve))
	if tls {
		r.srv = httptest.NewTLSServer(h)
	} else {
		r.srv = httptest.NewServer(h)
	}
	return r
}

func (r *HelmRepository) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	data, ok := r.files[req.URL.Path]
	r.mu.Unlock()
	if !ok {
		http.NotFound(w, req)
		return
	}
	_, _ = w.Write(data)
}

// URL is the server's root, http(s)://127.0.0.1:<port>.
func (r *HelmRepository) URL() string { return r.srv.URL }

// Server is the underlying test server, for its TLS certificate and client.
func (r *HelmRepository) Server() *httptest.Server { return r.srv }

// Serve answers GET path with data from now on.
func (r *HelmRepository) Serve(path string, data []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.files[path] = data
}

// Entry is one chart version of an index.yaml. A URL without a scheme is
// relative to the index and its Archive is served there.
type Entry struct {
	Name, Version, URL string
	Archive            []byte
	// Digest overrides the archive's sha256, to publish a wrong one.
	Digest string
}

// Publish serves <dir>/index.yaml listing entries, as `helm repo index`
// writes it, and each relative entry's archive below dir.
func (r *HelmRepository) Publish(dir string, entries ...Entry) error {
	index := repo.NewIndexFile()
	for _, e := range entries {
		digest := e.Digest
		if digest == "" {
			digest = SHA256(e.Archive)
		}
		md := &helmchart.Metadata{APIVersion: helmchart.APIVersionV2, Name: e.Name, Version: e.Version}
		if err := index.MustAdd(md, e.URL, "", digest); err != nil {
			return fmt.Errorf("indexing chart %s %s: %w", e.Name, e.Version, err)
		}
		if !strings.Contains(e.URL, "://") {
			r.Serve(dir+"/"+e.URL, e.Archive)
		}
	}
	index.SortEntries()
	data, err := yaml.Marshal(index)
	if err != nil {
		return err
	}
	r.Serve(dir+"/index.yaml", data)
	return nil
}

// Close stops the repository.
func (r *HelmRepository) Close() { r.srv.Close() }

// Package builds a chart archive, as `helm package` does, from files keyed
// by their path in the chart (Chart.yaml, values.yaml, templates/...).
func Package(files map[string]string) ([]byte, error) {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	buffered := make([]*loader.BufferedFile, 0, len(names))
	for _, name := range names {
		buffered = append(buffered, &loader.BufferedFile{Name: name, Data: []byte(files[name])})
	}
	ch, err := loader.LoadFiles(buffered)
	if err != nil {
		return nil, fmt.Errorf("loading chart files: %w", err)
	}
	dir, err := os.MkdirTemp("", "kuvryn-chart-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path, err := chartutil.Save(ch, dir)
	if err != nil {
		return nil, fmt.Errorf("packaging chart %s: %w", ch.Name(), err)
	}
	return os.ReadFile(path)
}

// TarGz builds a gzip'd tar stream of exactly these headers, in order, for
// archives `helm package` never writes (links, devices, odd entries). A
// regular file's content is bodies[its name] and its size is set from it.
func TarGz(headers []tar.Header, bodies map[string]string) ([]byte, error) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, hd := range headers {
		body := bodies[hd.Name]
		if hd.Typeflag == tar.TypeReg {
			hd.Size = int64(len(body))
		}
		if hd.Mode == 0 && hd.Typeflag != tar.TypeXGlobalHeader {
			hd.Mode = 0o644
		}
		if err := tw.WriteHeader(&hd); err != nil {
			return nil, err
		}
		if hd.Typeflag == tar.TypeReg {
			if _, err := io.WriteString(tw, body); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// SHA256 is an archive's digest in hex, as Revisions and index.yaml record it.
func SHA256(archive []byte) string {
	sum := sha256.Sum256(archive)
	return hex.EncodeToString(sum[:])
}
