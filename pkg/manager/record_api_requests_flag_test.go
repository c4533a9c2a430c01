package manager

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kuvryn/kuvryn-sync/pkg/internal/apitest"
	"github.com/kuvryn/kuvryn-sync/pkg/requestlog"
)

// TestRecordAPIRequests_RecordsClientsBuiltFromTheManagersConfig: the
// manager's own reads and the clients a service builds from its config,
// the sync-controller's impersonating ones among them, are recorded.
func TestRecordAPIRequests_RecordsClientsBuiltFromTheManagersConfig(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg := apitest.Start(t)
	path := filepath.Join(t.TempDir(), "requests.jsonl")
	mgr, err := NewWithOptions(Service{Name: "test-controller"}, Options{RecordAPIRequests: path}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	const account = "system:serviceaccount:default:deployer"
	impersonating := rest.CopyConfig(mgr.GetConfig())
	impersonating.Impersonate = rest.ImpersonationConfig{UserName: account}
	as, err := client.New(impersonating, client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKey{Namespace: "default", Name: "recorded"}
	cases := []struct {
		name, user string
		read       client.Reader
	}{
		{"the manager's uncached reader", "", mgr.GetAPIReader()},
		{"a client impersonating a service account", account, as},
	}
	for _, tc := range cases {
		// Neither finds the ConfigMap, and the account may not read it:
		// the API server answered, which is what is recorded.
		if err := tc.read.Get(ctx, key, &corev1.ConfigMap{}); err == nil {
			t.Fatalf("%s: read a ConfigMap that does not exist", tc.name)
		}
	}
	got, err := requestlog.ReadFile(path, func(e requestlog.Entry) bool {
		return e.Path == "/api/v1/namespaces/default/configmaps/recorded"
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(cases) {
		t.Fatalf("%d reads of the ConfigMap recorded, want %d", len(got), len(cases))
	}
	for i, tc := range cases {
		if got[i].User != tc.user || got[i].Status == 0 {
			t.Errorf("%s: recorded as %q with status %d, want as %q with the API server's status", tc.name, got[i].User, got[i].Status, tc.user)
		}
	}
}

// TestRecordAPIRequests_RefusesToStartWithoutItsFile: a service asked to
// record its requests does not start unrecorded.
func TestRecordAPIRequests_RefusesToStartWithoutItsFile(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, path string
	}{
		{"in a directory that does not exist", filepath.Join(dir, "missing", "requests.jsonl")},
		{"a directory", dir},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewWithOptions(Service{Name: "test-controller"}, Options{RecordAPIRequests: tc.path}, &rest.Config{Host: "https://127.0.0.1:1"})
			if err == nil || !strings.Contains(err.Error(), "--record-api-requests") || !strings.Contains(err.Error(), tc.path) {
				t.Fatalf("error %v, want one naming --record-api-requests and %s", err, tc.path)
			}
		})
	}
}
