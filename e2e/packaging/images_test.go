package packaging_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

var (
	buildLine = regexp.MustCompile(`(?m)^.*\bgo build .*$`)
	fromLine  = regexp.MustCompile(`(?m)^FROM (\S+)`)
)

// TestDockerfiles_BuildTheBinaryEachDeploymentRuns: for every Deployment of
// deploy/default, the Dockerfile of its image (kuvryn-sync/<x> is built by
// Dockerfile.<x>) builds and ships the binary the Deployment runs, from base
// images given as build arguments, as a non-root user. The images themselves
// are not built here: there is no container engine.
func TestDockerfiles_BuildTheBinaryEachDeploymentRuns(t *testing.T) {
	for _, d := range ofKind(deployDefaultAll(t), "Deployment") {
		c := manager(t, d)
		image := imageRepository(c["image"].(string))
		file := "Dockerfile." + strings.TrimPrefix(image, "kuvryn-sync/")
		data, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Errorf("%s runs image %s: %v", idOf(d), image, err)
			continue
		}
		dockerfile := string(data)
		binary := filepath.Base(stringsAt(t, c, "command")[0])
		if build := buildLine.FindString(dockerfile); !strings.Contains(build+" ", " ./services/"+binary+" ") {
			t.Errorf("%s does not build ./services/%s, which %s runs: %q", file, binary, idOf(d), build)
		}
		if !regexp.MustCompile(`(?m)^COPY --from=build .*/out/` + regexp.QuoteMeta(binary) + `[ \n]`).MatchString(dockerfile) {
			t.Errorf("%s does not copy /out/%s into the image %s runs", file, binary, idOf(d))
		}
		for _, m := range fromLine.FindAllStringSubmatch(dockerfile, -1) {
			if m[1] != "${GO_IMAGE}" && m[1] != "${BASE_IMAGE}" {
				t.Errorf("%s: FROM %s, want a base image from a build argument", file, m[1])
			}
		}
		if !strings.Contains(dockerfile, "\nUSER 65532:65532\n") {
			t.Errorf("%s does not run as the non-root user 65532", file)
		}
	}
}

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
