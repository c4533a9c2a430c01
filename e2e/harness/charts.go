package harness

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/registry"
	"helm.sh/helm/v3/pkg/repo"
	"oras.land/oras-go/v2/registry/remote/auth"
	"sigs.k8s.io/yaml"
)

// ChartServers serve Helm charts on loopback the two ways the guide names:
// an in-memory OCI registry and a classic Helm repository (index.yaml and
// archives). Both speak plain HTTP, so Applications set insecure: true.
type ChartServers struct {
	dir      string
	registry *httptest.Server
	helmRepo *httptest.Server

	mu       sync.Mutex
	index    *repo.IndexFile
	archives map[string][]byte
}

func startChartServers(dir string) (*ChartServers, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	c := &ChartServers{dir: dir, index: repo.NewIndexFile(), archives: map[string][]byte{}}
	c.registry = httptest.NewServer(ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0))))
	c.helmRepo = httptest.NewServer(http.HandlerFunc(c.serveHelmRepository))
	return c, nil
}

// OCIRepository is the spec.source.render.helm.chart.repository of the
// registry's charts, oci://127.0.0.1:<port>/charts.
func (c *ChartServers) OCIRepository() string {
	return "oci://" + strings.TrimPrefix(c.registry.URL, "http://") + "/charts"
}

// HelmRepository is the URL of the Helm repository, http://127.0.0.1:<port>.
func (c *ChartServers) HelmRepository() string { return c.helmRepo.URL }

// Publish pushes a packaged chart to the OCI registry, as `helm push`
// does, and adds it to the Helm repository's index, as `helm repo index`
// does. It returns the archive's sha256 in hex, as Revisions record it.
func (c *ChartServers) Publish(archive []byte) (string, error) {
	ch, err := loader.LoadArchive(bytes.NewReader(archive))
	if err != nil {
		return "", fmt.Errorf("reading chart archive: %w", err)
	}
	md := ch.Metadata
	client, err := registry.NewClient(
		registry.ClientOptPlainHTTP(),
		registry.ClientOptAuthorizer(auth.Client{Client: http.DefaultClient}),
		registry.ClientOptCredentialsFile(filepath.Join(c.dir, "registry-credentials.json")),
	)
	if err != nil {
		return "", err
	}
	ref := strings.TrimPrefix(c.OCIRepository(), "oci://") + "/" + md.Name + ":" + md.Version
	if _, err := client.Push(archive, ref); err != nil {
		return "", fmt.Errorf("pushing chart %s %s: %w", md.Name, md.Version, err)
	}

	sum := sha256.Sum256(archive)
	digest := hex.EncodeToString(sum[:])
	file := fmt.Sprintf("%s-%s.tgz", md.Name, md.Version)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.index.MustAdd(md, file, c.helmRepo.URL, digest); err != nil {
		return "", fmt.Errorf("indexing chart %s %s: %w", md.Name, md.Version, err)
	}
	c.index.SortEntries()
	c.archives[file] = archive
	return digest, nil
}

func (c *ChartServers) serveHelmRepository(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	name := strings.TrimPrefix(r.URL.Path, "/")
	if name == "index.yaml" {
		out, err := yaml.Marshal(c.index)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/yaml")
		_, _ = w.Write(out)
		return
	}
	archive, ok := c.archives[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/gzip")
	_, _ = w.Write(archive)
}

func (c *ChartServers) close() {
	c.registry.Close()
	c.helmRepo.Close()
}

// PackageChart builds a chart archive, as `helm package` does, from files
// keyed by their path in the chart (Chart.yaml, values.yaml, templates/...).
func PackageChart(files map[string]string) ([]byte, error) {
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
