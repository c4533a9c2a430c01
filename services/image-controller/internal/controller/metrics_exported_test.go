package controller_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/controlplane"
)

// The guide: besides Kuvryn Sync's own metrics, the controller-runtime and
// Go runtime metrics are exported. A manager built from the guide's flags
// serves them all on its metrics endpoint, those of the controllers this
// process runs included.
func TestMetrics_ControllerRuntimeAndGoRuntimeMetricsAreServed(t *testing.T) {
	port, err := controlplane.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	fs := flag.NewFlagSet("image-controller", flag.ContinueOnError)
	var o manager.Options
	o.BindFlags(fs)
	if err := fs.Parse([]string{"--metrics-bind-address=" + addr, "--metrics-secure=false", "--health-probe-bind-address=0"}); err != nil {
		t.Fatal(err)
	}
	mgr, err := manager.NewWithOptions(manager.Service{Name: "image-controller"}, o, cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("manager stopped with: %v", err)
		}
	})

	var body string
	eventually(t, "the metrics endpoint answering", func() bool {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		body = string(b)
		return err == nil && resp.StatusCode == http.StatusOK
	})
	for _, want := range []string{
		"\ngo_goroutines ",
		"\ngo_memstats_heap_alloc_bytes ",
		"\nprocess_resident_memory_bytes ",
		"\ncontroller_runtime_reconcile_total{controller=\"imagepolicy\",result=\"success\"} ",
		"\nworkqueue_adds_total{controller=\"repository-image-update\",name=\"repository-image-update\"} ",
		"\nrest_client_requests_total{",
		"\nkuvryn_sync_image_scans_total{",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", strings.TrimSpace(want))
		}
	}
	if t.Failed() {
		t.Logf("/metrics served:\n%.4000s", body)
	}
}
