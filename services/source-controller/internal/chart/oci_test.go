package chart

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	testchart "github.com/kuvryn/kuvryn-sync/pkg/testkit/chart"
)

func TestPull_OCIRegistryByExactVersion(t *testing.T) {
	reg := newOCIRegistry(t, nil)
	plain := packageChart(t, "api", "1.2.3", nil)
	prefixed := packageChart(t, "worker", "v2.0.0", nil)
	reg.push(t, "api", "1.2.3", plain)
	reg.push(t, "worker", "v2.0.0", prefixed)

	for _, tc := range []struct {
		name, chart, version, wantVersion string
		archive                           []byte
	}{
		{name: "same spelling", chart: "api", version: "1.2.3", wantVersion: "1.2.3", archive: plain},
		{name: "leading v requested, plain tag", chart: "api", version: "v1.2.3", wantVersion: "1.2.3", archive: plain},
		{name: "plain requested, v tag", chart: "worker", version: "2.0.0", wantVersion: "v2.0.0", archive: prefixed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Puller{Dir: t.TempDir()}
			pulled := mustPull(t, p, reg.ref(tc.chart, tc.version), "payments", nil)
			if got := pulled.Chart.Metadata; got.Name != tc.chart || got.Version != tc.wantVersion {
				t.Fatalf("pulled %s %s, want %s %s", got.Name, got.Version, tc.chart, tc.wantVersion)
			}
			if pulled.SHA256 != testchart.SHA256(tc.archive) {
				t.Fatalf("SHA256 = %s, want the pushed archive's %s", pulled.SHA256, testchart.SHA256(tc.archive))
			}
			if len(pulled.Chart.Templates) != 1 {
				t.Fatalf("chart has %d templates, want 1", len(pulled.Chart.Templates))
			}
		})
	}
}

func TestPull_OCIMissingVersionNamesTheTagsTried(t *testing.T) {
	reg := newOCIRegistry(t, nil)
	reg.push(t, "api", "1.2.3", packageChart(t, "api", "1.2.3", nil))

	_, err := (&Puller{Dir: t.TempDir()}).Pull(context.Background(), reg.ref("api", "1.2.4"), "payments", nil)
	if err == nil || !strings.Contains(err.Error(), "not found") || !strings.Contains(err.Error(), "1.2.4 and v1.2.4") {
		t.Fatalf("got %v, want a not-found error naming both tags", err)
	}
}

func TestPull_OCIPlainHTTPNeedsInsecure(t *testing.T) {
	reg := newOCIRegistry(t, nil)
	reg.push(t, "api", "1.2.3", packageChart(t, "api", "1.2.3", nil))
	ref := reg.ref("api", "1.2.3")
	ref.Insecure = false

	if _, err := (&Puller{Dir: t.TempDir()}).Pull(context.Background(), ref, "payments", nil); err == nil {
		t.Fatal("pulled over plain HTTP without insecure")
	}
}

func TestPull_OCIForwardsCredentials(t *testing.T) {
	reg := newOCIRegistry(t, testCreds)
	reg.push(t, "api", "1.2.3", packageChart(t, "api", "1.2.3", nil))
	p := &Puller{Dir: t.TempDir()}

	if _, err := p.Pull(context.Background(), reg.ref("api", "1.2.3"), "payments", nil); err == nil {
		t.Fatal("anonymous pull from a registry that requires credentials succeeded")
	}
	mustPull(t, p, reg.ref("api", "1.2.3"), "payments", testCreds)
}

// Credentials in Helm's registry config or Docker's config.json must not
// be used: only the caller's credentials count.
func TestPull_OCIIgnoresLocalHelmAndDockerCredentials(t *testing.T) {
	reg := newOCIRegistry(t, testCreds)
	reg.push(t, "api", "1.2.3", packageChart(t, "api", "1.2.3", nil))

	home := t.TempDir()
	config := `{"auths":{"` + reg.Host() + `":{"auth":"` +
		base64.StdEncoding.EncodeToString([]byte(testCreds.Username+":"+testCreds.Password)) + `"}}}`
	configPath := filepath.Join(home, "config.json")
	if err := os.WriteFile(configPath, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("DOCKER_CONFIG", home)
	t.Setenv("HELM_REGISTRY_CONFIG", configPath)
	t.Setenv("HELM_CONFIG_HOME", home)

	p := &Puller{Dir: t.TempDir()}
	if _, err := p.Pull(context.Background(), reg.ref("api", "1.2.3"), "payments", nil); err == nil {
		t.Fatal("pull without credentials succeeded using credentials from local config files")
	}
	mustPull(t, p, reg.ref("api", "1.2.3"), "payments", testCreds)
}

func TestPull_OCIRefusesOversizeArchives(t *testing.T) {
	reg := newOCIRegistry(t, nil)
	reg.push(t, "big", "1.0.0", packageChart(t, "big", "1.0.0", map[string][]byte{"files/padding": randomBytes(t, 256<<10)}))
	p := &Puller{Dir: t.TempDir(), MaxArchiveBytes: 64 << 10}

	_, err := p.Pull(context.Background(), reg.ref("big", "1.0.0"), "payments", nil)
	if err == nil || !strings.Contains(err.Error(), "byte limit") {
		t.Fatalf("got %v, want a size limit error", err)
	}
	if n := len(cachedArchives(t, p.Dir)); n != 0 {
		t.Fatalf("%d archives cached after a refused pull, want 0", n)
	}
}
