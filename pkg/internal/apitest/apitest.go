// Package apitest starts etcd and kube-apiserver for a test of a pkg
// package, through envtest directly: pkg does not depend on the test kits'
// module (docs/benchmarks.md, Build).
package apitest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Start runs an API server until the test ends and returns the admin's
// config, without client-side rate limit. The binaries come from
// KUBEBUILDER_ASSETS, else the repository's bin/.
func Start(tb testing.TB) *rest.Config {
	tb.Helper()
	bin := os.Getenv("KUBEBUILDER_ASSETS")
	if bin == "" {
		_, file, _, _ := runtime.Caller(0)
		bin = filepath.Join(filepath.Dir(file), "..", "..", "..", "bin")
	}
	// A busy shared machine needs longer than envtest's defaults.
	env := &envtest.Environment{
		BinaryAssetsDirectory:    bin,
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
	}
	cfg, err := env.Start()
	if err != nil {
		_ = env.Stop()
		tb.Fatalf("starting etcd and kube-apiserver: %v", err)
	}
	tb.Cleanup(func() { _ = env.Stop() })
	cfg.QPS = -1
	return cfg
}
