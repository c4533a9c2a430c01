package chart

import (
	"context"
	"strings"
	"testing"

	testchart "github.com/kuvryn/kuvryn-sync/pkg/testkit/chart"
)

func TestPull_HTTPSRepositoryResolvesTheExactVersion(t *testing.T) {
	r := newChartRepo(t, nil)
	v1 := packageChart(t, "api", "1.0.0", nil)
	v11 := packageChart(t, "api", "1.1.0", nil)
	r.publish(t,
		indexEntry{name: "api", version: "1.0.0", url: "charts/api-1.0.0.tgz", archive: v1},
		indexEntry{name: "api", version: "1.1.0", url: "charts/api-1.1.0.tgz", archive: v11},
	)

	for _, tc := range []struct {
		name, version string
		archive       []byte
	}{
		{name: "older version, relative URL", version: "1.0.0", archive: v1},
		{name: "leading v matches the plain version", version: "v1.1.0", archive: v11},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pulled := mustPull(t, r.puller(t), r.ref("api", tc.version), "payments", nil)
			if !sameVersion(pulled.Chart.Metadata.Version, tc.version) {
				t.Fatalf("pulled version %s, want %s", pulled.Chart.Metadata.Version, tc.version)
			}
			if pulled.SHA256 != testchart.SHA256(tc.archive) {
				t.Fatalf("SHA256 = %s, want %s", pulled.SHA256, testchart.SHA256(tc.archive))
			}
		})
	}
}

func TestPull_HTTPSRepositoryForwardsCredentialsOnlyToItsOwnHost(t *testing.T) {
	r := newChartRepo(t, testCreds)
	mirror := newChartRepo(t, nil)
	local := packageChart(t, "api", "1.0.0", nil)
	remote := packageChart(t, "worker", "1.0.0", nil)
	mirror.serve("/worker-1.0.0.tgz", remote)
	r.publish(t,
		indexEntry{name: "api", version: "1.0.0", url: "charts/api-1.0.0.tgz", archive: local},
		indexEntry{name: "worker", version: "1.0.0", url: mirror.srv.URL + "/worker-1.0.0.tgz", archive: remote},
	)

	if _, err := r.puller(t).Pull(context.Background(), r.ref("api", "1.0.0"), "payments", nil); err == nil ||
		!strings.Contains(err.Error(), "401") {
		t.Fatalf("anonymous pull got %v, want 401", err)
	}
	mustPull(t, r.puller(t), r.ref("api", "1.0.0"), "payments", testCreds)
	mustPull(t, r.puller(t), r.ref("worker", "1.0.0"), "payments", testCreds)
	if mirror.sawAuthorization() {
		t.Fatal("credentials were sent to a chart URL on another host")
	}
}

func TestPull_HTTPSRepositoryRefusesUnlistedOrMismatchedCharts(t *testing.T) {
	r := newChartRepo(t, nil)
	good := packageChart(t, "api", "1.0.0", nil)
	renamed := packageChart(t, "other", "2.0.0", nil)
	r.publish(t,
		indexEntry{name: "api", version: "1.0.0", url: "charts/api-1.0.0.tgz", archive: good},
		indexEntry{name: "api", version: "1.0.1", url: "charts/api-1.0.1.tgz", archive: good, digest: strings.Repeat("0", 64)},
		indexEntry{name: "api", version: "2.0.0", url: "charts/other-2.0.0.tgz", archive: renamed},
		indexEntry{name: "api", version: "3.0.0", url: "http://" + strings.TrimPrefix(r.srv.URL, "https://") + "/api-3.0.0.tgz", archive: good},
	)

	for _, tc := range []struct {
		version, want string
	}{
		{version: "1.0.2", want: "not found"},
		{version: "1.0.1", want: "does not match the index digest"},
		{version: "2.0.0", want: "holds chart other 2.0.0"},
		{version: "3.0.0", want: "only https"},
	} {
		t.Run(tc.version, func(t *testing.T) {
			_, err := r.puller(t).Pull(context.Background(), r.ref("api", tc.version), "payments", nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
