package receiver

import (
	"net/http"
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestReceiver_ImagePolicyWebhookStampsScanRequest calls
// /hooks/imagepolicies/<namespace>/<name> with a bearer token, a GitHub
// package event signature and a GitLab token: each stamps
// scan-requested-at; a GitHub ping is answered and other GitHub events
// ignored; a wrong token and an unknown ImagePolicy get the same 401.
func TestReceiver_ImagePolicyWebhookStampsScanRequest(t *testing.T) {
	f := start(t, fixtureOptions{})
	f.secret("registry-hook", "s3cret")
	f.imagePolicy("api", "registry-hook")
	pkg := []byte(`{"action":"published","package":{"name":"api","package_type":"container"}}`)
	cases := []struct {
		name   string
		policy string
		header map[string]string
		status int
		result string
	}{
		{"bearer token", "api", map[string]string{"Authorization": "Bearer s3cret"}, http.StatusAccepted, "accepted"},
		{"GitHub package event", "api", map[string]string{"X-GitHub-Event": "package", "X-Hub-Signature-256": sign(pkg, "s3cret")}, http.StatusAccepted, "accepted"},
		{"GitHub registry_package event", "api", map[string]string{"X-GitHub-Event": "registry_package", "X-Hub-Signature-256": sign(pkg, "s3cret")}, http.StatusAccepted, "accepted"},
		{"GitLab token", "api", map[string]string{"X-Gitlab-Event": "Pipeline Hook", "X-Gitlab-Token": "s3cret"}, http.StatusAccepted, "accepted"},
		{"GitHub ping", "api", map[string]string{"X-GitHub-Event": "ping", "X-Hub-Signature-256": sign(pkg, "s3cret")}, http.StatusOK, "ping"},
		{"GitHub push event", "api", map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": sign(pkg, "s3cret")}, http.StatusOK, "ignored"},
		{"wrong bearer token", "api", map[string]string{"Authorization": "Bearer guess"}, http.StatusUnauthorized, "unauthorized"},
		{"unknown ImagePolicy", "nope", map[string]string{"Authorization": "Bearer s3cret"}, http.StatusUnauthorized, "unauthorized"},
	}
	var unauthorized []response
	want := map[string]int{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			policy := &syncv1.ImagePolicy{}
			before := f.annotation(policy, "api", syncv1.ScanRequestedAtAnnotation)
			got := f.post("/hooks/imagepolicies/"+f.ns+"/"+c.policy, c.header, pkg)
			want[c.result]++
			if got.status != c.status {
				t.Fatalf("%d %q, want %d", got.status, got.body, c.status)
			}
			if got.status == http.StatusUnauthorized {
				unauthorized = append(unauthorized, got)
			}
			after := f.annotation(policy, "api", syncv1.ScanRequestedAtAnnotation)
			if stamped := after != before; stamped != (c.result == "accepted") {
				t.Fatalf("%s went from %q to %q on a %s request", syncv1.ScanRequestedAtAnnotation, before, after, c.result)
			}
			if c.result == "accepted" {
				if owners := annotationOwners(t, policy, syncv1.ScanRequestedAtAnnotation); len(owners) != 1 || owners[0] != syncv1.FieldManagerWeb {
					t.Fatalf("%s is owned by %v, want only %s", syncv1.ScanRequestedAtAnnotation, owners, syncv1.FieldManagerWeb)
				}
			}
		})
	}
	if len(unauthorized) != 2 || unauthorized[0].body != unauthorized[1].body ||
		len(unauthorized[0].header) != len(unauthorized[1].header) {
		t.Fatalf("the two 401s differ: %+v", unauthorized)
	}
	for k, v := range unauthorized[0].header {
		if got := unauthorized[1].header.Values(k); len(got) != len(v) || got[0] != v[0] {
			t.Fatalf("header %s: %v and %v", k, v, got)
		}
	}
	got := f.counts()
	for r, n := range got {
		if n != want[r] {
			t.Errorf("count of %s = %d, want %d (all: %v)", r, n, want[r], got)
		}
	}
}
