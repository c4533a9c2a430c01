package packaging_test

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestImages_NamedWithoutARegistryHost: the default images of both
// installs are plain names (kuvryn-sync/<image>) for you to point at your own registry.
func TestImages_NamedWithoutARegistryHost(t *testing.T) {
	for _, source := range []struct {
		name string
		objs []*unstructured.Unstructured
	}{
		{"deploy/default", deployDefaultAll(t)},
		{"charts/kuvryn-sync", mustRenderChart(t, enabledValues(allServices()))},
	} {
		deployments := ofKind(source.objs, "Deployment")
		for _, d := range deployments {
			image := fmt.Sprint(manager(t, d)["image"])
			first, _, _ := strings.Cut(imageRepository(image), "/")
			if !strings.HasPrefix(image, "kuvryn-sync/") || strings.ContainsAny(first, ".:") || first == "localhost" {
				t.Errorf("%s: %s runs image %q, want kuvryn-sync/<image> without a registry host", source.name, idOf(d), image)
			}
		}
		if len(deployments) != len(services) {
			t.Errorf("%s: %d Deployments, want %d", source.name, len(deployments), len(services))
		}
	}
}
