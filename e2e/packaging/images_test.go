package packaging_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// publishedRegistry is where the release workflow pushes the images for the
// repository github.com/kuvryn/kuvryn-sync: ghcr.io/<owner>.
const publishedRegistry = "ghcr.io/kuvryn"

// imageOf names the image holding each service's binary, built from
// Dockerfile.<image> and published as kuvryn-sync-<image>.
var imageOf = map[string]string{
	"source-controller": "source",
	"image-controller":  "source",
	"sync-controller":   "sync",
	"notify-controller": "sync",
	"web":               "web",
}

// TestImages_PublishedOnGHCRAtTheChartsAppVersion: both installs, with
// their defaults, run the images the release workflow publishes,
// ghcr.io/kuvryn/kuvryn-sync-<image>, tagged with the chart's appVersion, so
// that a cluster can pull them without any setting.
func TestImages_PublishedOnGHCRAtTheChartsAppVersion(t *testing.T) {
	appVersion := loadChart(t).Metadata.AppVersion
	if !regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`).MatchString(appVersion) {
		t.Fatalf("charts/kuvryn-sync appVersion %q is not a release tag v<SemVer>, which the images are tagged with", appVersion)
	}
	for _, source := range []struct {
		name string
		objs []*unstructured.Unstructured
	}{
		{"deploy/default", deployDefaultAll(t)},
		{"charts/kuvryn-sync with defaults", mustRenderChart(t, "")},
		{"charts/kuvryn-sync with every service", mustRenderChart(t, enabledValues(allServices()))},
	} {
		deployments := ofKind(source.objs, "Deployment")
		for _, d := range deployments {
			component := d.GetLabels()["app.kubernetes.io/component"]
			want := publishedRegistry + "/kuvryn-sync-" + imageOf[component] + ":" + appVersion
			if got := manager(t, d)["image"]; got != want {
				t.Errorf("%s: %s runs image %v, want %s", source.name, idOf(d), got, want)
			}
		}
		if len(deployments) == 0 {
			t.Errorf("%s: no Deployments", source.name)
		}
	}
}

// TestImages_PublishedUnderTheRepositorysOwner: the release workflow pushes
// under the GitHub owner of the repository it runs in, so the default
// registry's owner is the owner in the Go module path.
func TestImages_PublishedUnderTheRepositorysOwner(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "apis", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^module github\.com/([^/]+)/`).FindSubmatch(data)
	if m == nil {
		t.Fatalf("apis/go.mod: no module github.com/<owner>/... line")
	}
	if want := "ghcr.io/" + string(m[1]); publishedRegistry != want {
		t.Fatalf("the images are published to %s, but the repository's owner publishes to %s", publishedRegistry, want)
	}
}
