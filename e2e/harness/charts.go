package harness

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"helm.sh/helm/v3/pkg/chart/loader"

	testchart "github.com/kuvryn/kuvryn-sync/pkg/testkit/chart"
	testregistry "github.com/kuvryn/kuvryn-sync/pkg/testkit/registry"
)

// ChartServers serve Helm charts on loopback the two ways the guide names:
// an in-memory OCI registry and a classic Helm repository (index.yaml and
// archives). Both speak plain HTTP, so Applications set insecure: true.
type ChartServers struct {
	registry *testregistry.Registry
	helmRepo *testchart.HelmRepository

	mu      sync.Mutex
	entries []testchart.Entry
	hold    *Hold
	// down makes both servers answer 503 to every request.
	down bool
}

// StartChartServers starts an OCI registry and a Helm repository on
// loopback; Env.Charts is one, and a test that takes its servers down
// starts its own so that the tests beside it are not disturbed.
func StartChartServers() (*ChartServers, error) {
	c := &ChartServers{}
	var err error
	if c.registry, err = testregistry.New(testregistry.Options{Wrap: c.unavailable}); err != nil {
		return nil, err
	}
	c.helmRepo = testchart.StartHelmRepository(false, func(next http.Handler) http.Handler {
		return c.unavailable(c.holdArchives(next))
	})
	return c, nil
}

// SetUnavailable makes the OCI registry and the Helm repository answer
// every request with 503 Service Unavailable, as a registry down for
// maintenance does, until SetUnavailable(false).
func (c *ChartServers) SetUnavailable(down bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.down = down
}

func (c *ChartServers) unavailable(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		down := c.down
		c.mu.Unlock()
		if down {
			http.Error(w, "chart server down for the test", http.StatusServiceUnavailable)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// holdArchives keeps archive downloads waiting while a Hold is set.
func (c *ChartServers) holdArchives(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		hold := c.hold
		c.mu.Unlock()
		if hold != nil && !strings.HasSuffix(r.URL.Path, "/index.yaml") && !hold.wait(r) {
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Hold keeps the Helm repository's chart archive downloads waiting, so a
// test can act while a render is in flight.
type Hold struct {
	release  chan struct{}
	once     sync.Once
	mu       sync.Mutex
	requests int
	arrived  chan struct{}
}

// HoldArchives makes every chart archive download of the Helm repository
// wait until Release; index.yaml is still served.
func (c *ChartServers) HoldArchives() *Hold {
	h := &Hold{release: make(chan struct{}), arrived: make(chan struct{}, 64)}
	c.mu.Lock()
	c.hold = h
	c.mu.Unlock()
	return h
}

// Arrived is signalled once for each download that starts waiting.
func (h *Hold) Arrived() <-chan struct{} { return h.arrived }

// Requests counts the downloads that have waited so far.
func (h *Hold) Requests() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.requests
}

// Release lets every waiting and later download through.
func (h *Hold) Release() { h.once.Do(func() { close(h.release) }) }

// wait holds one download until Release or until its client goes away.
func (h *Hold) wait(r *http.Request) bool {
	h.mu.Lock()
	h.requests++
	h.mu.Unlock()
	select {
	case h.arrived <- struct{}{}:
	default:
	}
	select {
	case <-h.release:
		return true
	case <-r.Context().Done():
		return false
	}
}

// OCIRepository is the spec.source.render.helm.chart.repository of the
// registry's charts, oci://127.0.0.1:<port>/charts.
func (c *ChartServers) OCIRepository() string { return c.registry.ChartRepository() }

// HelmRepository is the URL of the Helm repository, http://127.0.0.1:<port>.
func (c *ChartServers) HelmRepository() string { return c.helmRepo.URL() }

// Publish pushes a packaged chart to the OCI registry, as `helm push`
// does, and adds it to the Helm repository's index, as `helm repo index`
// does. It returns the archive's sha256 in hex, as Revisions record it.
func (c *ChartServers) Publish(archive []byte) (string, error) {
	ch, err := loader.LoadArchive(bytes.NewReader(archive))
	if err != nil {
		return "", fmt.Errorf("reading chart archive: %w", err)
	}
	md := ch.Metadata
	if err := c.registry.PushChart(archive, md.Name, md.Version); err != nil {
		return "", err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries = append(c.entries, testchart.Entry{
		Name: md.Name, Version: md.Version, URL: fmt.Sprintf("%s-%s.tgz", md.Name, md.Version), Archive: archive,
	})
	if err := c.helmRepo.Publish("", c.entries...); err != nil {
		return "", err
	}
	return testchart.SHA256(archive), nil
}

// Close stops both servers.
func (c *ChartServers) Close() {
	c.registry.Close()
	c.helmRepo.Close()
}

// PackageChart builds a chart archive, as `helm package` does, from files
// keyed by their path in the chart (Chart.yaml, values.yaml, templates/...).
func PackageChart(files map[string]string) ([]byte, error) { return testchart.Package(files) }
