package manager

import (
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

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
