package scan

import (
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/prometheus/client_golang/prometheus/testutil"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	testregistry "github.com/kuvryn/kuvryn-sync/pkg/testkit/registry"
)

// TestScan_CountsEveryRegistryRequest: the guide counts registry requests
// in kuvryn_sync_image_scans_total; it counted one per scan. Each request a
// scan sends counts once, by whether the registry answered it: the
// credentials challenge before an authenticated request is part of a
// success, a refusal or no answer at all is an error.
func TestScan_CountsEveryRegistryRequest(t *testing.T) {
	public := testregistry.Start(t, testregistry.Options{})
	private := testregistry.Start(t, testregistry.Options{Username: "robot", Password: "s3cret"})
	down := testregistry.Start(t, testregistry.Options{})
	public.Push(t, "acme/api", "1.0.0", "1.1.0")
	private.Push(t, "acme/api", "1.0.0")
	down.Stop()

	// The test registries speak plain HTTP on loopback, where
	// go-containerregistry pings over https and http at once: the https
	// ping gets no answer, an error the registry never sees.
	const httpsPing = 1
	for _, tc := range []struct {
		name     string
		registry *testregistry.Registry
		repo     string
		auth     authn.Authenticator
		// success and errors are the requests counted, the https ping
		// aside; the registry saw them all unless it is down.
		success, errors float64
		failed          bool
	}{
		// ping, tag list, manifest
		{name: "an anonymous scan", registry: public, repo: "acme/api", success: 3},
		// ping challenged, tag list, manifest: basic auth needs no token
		{name: "a scan with credentials", registry: private, repo: "acme/api", auth: basic("robot", "s3cret"), success: 3},
		// ping challenged, tag list refused
		{name: "a scan with wrong credentials", registry: private, repo: "acme/api", auth: basic("robot", "wrong"), success: 1, errors: 1, failed: true},
		// ping, tag list not found
		{name: "a missing repository", registry: public, repo: "acme/missing", success: 1, errors: 1, failed: true},
		// the http ping gets no answer either
		{name: "a registry that is down", registry: down, repo: "acme/api", errors: 1, failed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			success, errors := testutil.ToFloat64(requests.WithLabelValues(requestSuccess)), testutil.ToFloat64(requests.WithLabelValues(requestError))
			seen := tc.registry.Requests.Load()
			s := New(Options{QPS: 100, Burst: 10})
			_, err := s.Scan(t.Context(), syncv1.ImagePolicySpec{Image: tc.registry.Host() + "/" + tc.repo, Policy: semverPolicy("1.x")}, tc.auth)
			if (err != nil) != tc.failed {
				t.Fatalf("scan error %v, want failed %v", err, tc.failed)
			}
			gotSuccess := testutil.ToFloat64(requests.WithLabelValues(requestSuccess)) - success
			gotErrors := testutil.ToFloat64(requests.WithLabelValues(requestError)) - errors - httpsPing
			if gotSuccess != tc.success || gotErrors != tc.errors {
				t.Errorf("counted %v success and %v error, want %v and %v", gotSuccess, gotErrors, tc.success, tc.errors)
			}
			if tc.registry != down {
				if sent := float64(tc.registry.Requests.Load() - seen); sent != gotSuccess+gotErrors {
					t.Errorf("the registry saw %v requests, %v were counted", sent, gotSuccess+gotErrors)
				}
			}
		})
	}
}
