package ssa_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
)

// The suite runs etcd and kube-apiserver with the project's CRDs, through
// envtest directly: pkg does not depend on the test kits' module
// (docs/benchmarks.md, Build).
var (
	env *envtest.Environment
	// cfg is the admin's, without client-side rate limit.
	cfg   *rest.Config
	admin client.Client
)

func TestMain(m *testing.M) {
	bin := os.Getenv("KUBEBUILDER_ASSETS")
	if bin == "" {
		bin = filepath.Join("..", "..", "bin")
	}
	// A busy shared machine needs longer than envtest's defaults.
	env = &envtest.Environment{
		BinaryAssetsDirectory:    bin,
		CRDDirectoryPaths:        []string{filepath.Join("..", "..", "deploy", "crds")},
		ErrorIfCRDPathMissing:    true,
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
		CRDInstallOptions:        envtest.CRDInstallOptions{MaxTime: time.Minute},
	}
	// controller-runtime's warnings would otherwise come with a stack trace
	// saying no logger is set.
	log.SetLogger(logr.Discard())
	var err error
	if cfg, err = env.Start(); err == nil {
		cfg.QPS = -1
		admin, err = client.New(cfg, client.Options{Scheme: manager.Scheme()})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting etcd and kube-apiserver:", err)
		_ = env.Stop()
		os.Exit(1)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping etcd and kube-apiserver:", err)
	}
	os.Exit(code)
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

// newNamespace creates a namespace of its own for one test.
func newNamespace(tb testing.TB) string {
	tb.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "ssa-"}}
	must(tb, admin.Create(tb.Context(), ns))
	return ns.Name
}

// newRevision creates a Revision with no status.
func newRevision(tb testing.TB, ns, name string) *syncv1.Revision {
	tb.Helper()
	rev := &syncv1.Revision{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: syncv1.RevisionSpec{
			ApplicationName: "web",
			DesiredState: syncv1.DesiredStateRef{
				SecretName: name, Digest: "sha256:" + strings.Repeat("ab", 32), Objects: 4,
			},
		},
	}
	must(tb, admin.Create(tb.Context(), rev))
	return rev
}

// newApplication creates an Application with no status.
func newApplication(tb testing.TB, ns, name string) *syncv1.Application {
	tb.Helper()
	app := &syncv1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: syncv1.ApplicationSpec{Source: syncv1.ApplicationSource{
			RepositoryRef: syncv1.LocalObjectReference{Name: "platform"},
			Path:          "apps/" + name,
		}},
	}
	must(tb, admin.Create(tb.Context(), app))
	return app
}

// requests counts the requests a client sends and their bodies' bytes.
type requests struct {
	n, bytes atomic.Int64
	next     http.RoundTripper
}

func (r *requests) RoundTrip(req *http.Request) (*http.Response, error) {
	r.n.Add(1)
	if req.ContentLength > 0 {
		r.bytes.Add(req.ContentLength)
	}
	return r.next.RoundTrip(req)
}

// countingClient is an admin client whose requests are counted.
func countingClient(tb testing.TB) (client.Client, *requests) {
	tb.Helper()
	counted := &requests{}
	c := rest.CopyConfig(cfg)
	c.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { counted.next = rt; return counted }
	// admin's REST mapper has discovered the kinds already: the counted
	// client's requests are its writes alone.
	cl, err := client.New(c, client.Options{Scheme: admin.Scheme(), Mapper: admin.RESTMapper()})
	must(tb, err)
	return cl, counted
}
