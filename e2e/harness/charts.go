package harness

import (
	"bytes"
	"fmt"
	"sync"

	"helm.sh/helm/v3/pkg/chart/loader"

	testchart "github.com/kuvryn/kuvryn-sync/pkg/testkit/chart"
)

// ChartServers serve Helm charts on loopback the two ways the guide names:
// an in-memory OCI registry and a classic Helm repository (index.yaml and
// archives). Both speak plain HTTP, so Applications set insecure: true.
type ChartServers struct {
	registry *testchart.Registry
	helmRepo *testchart.HelmRepository

	mu      sync.Mutex
	entries []testchart.Entry
}

func startChartServers() *ChartServers {
	return &ChartServers{
		registry: testchart.StartRegistry(nil),
		helmRepo: testchart.StartHelmRepository(false, nil),
	}
}

// OCIRepository is the spec.source.render.helm.chart.repository of the
// registry's charts, oci://127.0.0.1:<port>/charts.
func (c *ChartServers) OCIRepository() string { return c.registry.Repository() }

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
	if err := c.registry.Push(archive, md.Name, md.Version, nil); err != nil {
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

func (c *ChartServers) close() {
	c.registry.Close()
	c.helmRepo.Close()
}

// PackageChart builds a chart archive, as `helm package` does, from files
// keyed by their path in the chart (Chart.yaml, values.yaml, templates/...).
func PackageChart(files map[string]string) ([]byte, error) { return testchart.Package(files) }
