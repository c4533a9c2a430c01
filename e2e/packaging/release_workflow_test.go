package packaging_test

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// releaseWorkflow is the part of .github/workflows/release.yml that must
// agree with the repository. actionlint checks the rest (make lint).
type releaseWorkflow struct {
	Jobs struct {
		Images struct {
			Strategy struct {
				Matrix struct {
					Image []string `json:"image"`
				} `json:"matrix"`
			} `json:"strategy"`
			Env   map[string]string `json:"env"`
			Steps []workflowStep    `json:"steps"`
		} `json:"images"`
		Ksync struct {
			Steps []workflowStep `json:"steps"`
		} `json:"ksync"`
	} `json:"jobs"`
}

type workflowStep struct {
	Uses string            `json:"uses"`
	Run  string            `json:"run"`
	With map[string]string `json:"with"`
}

// TestReleaseWorkflow_PublishesWhatTheInstallsPull: the release workflow
// builds one image per Dockerfile.<image>, from that Dockerfile, for
// linux/amd64 and linux/arm64, under the name the chart and deploy/ pull
// (…/kuvryn-sync-<image>), and stamps ksync's version as the Makefile's
// build target does.
func TestReleaseWorkflow_PublishesWhatTheInstallsPull(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, ".github", "workflows", "release.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf releaseWorkflow
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatalf("release.yml: %v", err)
	}
	images := wf.Jobs.Images

	var dockerfiles []string
	for _, name := range dockerfileNames(t) {
		dockerfiles = append(dockerfiles, strings.TrimPrefix(name, "Dockerfile."))
	}
	pulled := slices.Compact(slices.Sorted(maps.Values(imageOf)))
	if got := slices.Sorted(slices.Values(images.Strategy.Matrix.Image)); !slices.Equal(got, dockerfiles) || !slices.Equal(got, pulled) {
		t.Errorf("release.yml builds the images %v; the Dockerfiles are for %v and the installs pull %v", got, dockerfiles, pulled)
	}
	if name := images.Env["IMAGE"]; !regexp.MustCompile(`^ghcr\.io/\$\{\{ [\w.]+ \}\}/kuvryn-sync-\$\{\{ matrix\.image \}\}$`).MatchString(name) {
		t.Errorf("release.yml pushes the image %q, want ghcr.io/<owner>/kuvryn-sync-${{ matrix.image }}", name)
	}
	var build *workflowStep
	for i, s := range images.Steps {
		if strings.HasPrefix(s.Uses, "docker/build-push-action@") {
			build = &images.Steps[i]
		}
	}
	if build == nil {
		t.Fatal("release.yml: the images job has no docker/build-push-action step")
	}
	for k, want := range map[string]string{
		"file":      "Dockerfile.${{ matrix.image }}",
		"platforms": "linux/amd64,linux/arm64",
		"tags":      "${{ env.IMAGE }}:${{ env.TAG }}",
	} {
		if build.With[k] != want {
			t.Errorf("release.yml builds the images with %s %q, want %q", k, build.With[k], want)
		}
	}

	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`-ldflags "([^"]*)=\$\(VERSION\)"`).FindSubmatch(makefile)
	if m == nil {
		t.Fatal(`Makefile: no -ldflags "...=$(VERSION)" in the build target`)
	}
	stamp := `-ldflags "` + string(m[1]) + `=$TAG"`
	stamped := false
	for _, s := range wf.Jobs.Ksync.Steps {
		stamped = stamped || strings.Contains(s.Run, stamp)
	}
	if !stamped {
		t.Errorf("release.yml does not build ksync with the Makefile's version stamp %s", stamp)
	}
}
