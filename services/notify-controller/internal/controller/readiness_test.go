package controller

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/controlplane"
)

// TestReadiness_NotReadyUntilControllersCanWork: the manager's /readyz
// includes the controllers check, which fails until the caches the
// controllers read have synced and the delivery workers run.
func TestReadiness_NotReadyUntilControllersCanWork(t *testing.T) {
	e := newEnv(t)
	port, err := controlplane.FreePort()
	must(t, err)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	mgr, err := ctrl.NewManager(controller, ctrl.Options{
		Scheme:                 manager.Scheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: addr,
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{e.ns: {}}},
	})
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	c, err := Setup(ctx, mgr, Options{Delivery: testDelivery(nil)})
	must(t, err)
	if err := c.ready(httptest.NewRequest(http.MethodGet, "/readyz", nil)); err == nil {
		t.Error("ready before the manager started")
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("manager stopped with: %v", err)
		}
	})
	var body string
	e.eventually("/readyz answers 200", func() bool {
		resp, err := http.Get("http://" + addr + "/readyz?verbose")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		body = string(b)
		return resp.StatusCode == http.StatusOK
	}, func() string { return body })
	if !strings.Contains(body, "[+]controllers ok") {
		t.Errorf("/readyz does not include the controllers check:\n%s", body)
	}
}
