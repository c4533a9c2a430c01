package testregistry

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	testchart "github.com/kuvryn/kuvryn-sync/pkg/testkit/chart"
)

// TestRegistry_ServesWhatWasPushedToWhoMaySeeIt: images and charts pushed
// through the kit are there to read, with the registry's credentials when it
// has some and only then, and every request is counted, refused ones too.
func TestRegistry_ServesWhatWasPushedToWhoMaySeeIt(t *testing.T) {
	archive, err := testchart.Package(map[string]string{"Chart.yaml": "apiVersion: v2\nname: api\nversion: 1.2.3\n"})
	if err != nil {
		t.Fatal(err)
	}
	creds := authn.FromConfig(authn.AuthConfig{Username: "robot", Password: "s3cret"})
	cases := []struct {
		name     string
		opts     Options
		pull     authn.Authenticator
		wantPull bool
	}{
		{"anonymous registry, anonymous pull", Options{}, authn.Anonymous, true},
		{"private registry, anonymous pull", Options{Username: "robot", Password: "s3cret"}, authn.Anonymous, false},
		{"private registry, wrong password", Options{Username: "robot", Password: "s3cret"}, authn.FromConfig(authn.AuthConfig{Username: "robot", Password: "guess"}), false},
		{"private registry, its credentials", Options{Username: "robot", Password: "s3cret"}, creds, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := Start(t, tc.opts)
			image := r.Push(t, "acme/api", "1.0.0")["1.0.0"]
			if err := r.PushChart(archive, "api", "1.2.3"); err != nil {
				t.Fatal(err)
			}
			if want := "oci://" + r.Host() + "/charts"; r.ChartRepository() != want {
				t.Fatalf("ChartRepository() = %s, want %s", r.ChartRepository(), want)
			}
			for ref, digest := range map[string]string{"acme/api:1.0.0": image.String(), "charts/api:1.2.3": ""} {
				tag, err := name.NewTag(r.Host() + "/" + ref)
				if err != nil {
					t.Fatal(err)
				}
				before := r.Requests.Load()
				desc, err := remote.Head(tag, remote.WithAuth(tc.pull))
				if r.Requests.Load() == before {
					t.Errorf("HEAD %s was not counted", ref)
				}
				if !tc.wantPull {
					if err == nil || !strings.Contains(err.Error(), "UNAUTHORIZED") && !strings.Contains(err.Error(), http.StatusText(http.StatusUnauthorized)) {
						t.Errorf("HEAD %s = %v, %v; want it refused as unauthorized", ref, desc, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("HEAD %s: %v", ref, err)
				}
				if digest != "" && desc.Digest.String() != digest {
					t.Errorf("HEAD %s = %s, want the pushed image's %s", ref, desc.Digest, digest)
				}
			}
		})
	}
}
