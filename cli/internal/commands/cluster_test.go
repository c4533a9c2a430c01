package commands

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/controlplane"
)

// The tests that need a cluster share one real etcd and kube-apiserver with
// the CRDs, started by the first of them. No controller runs: the tests
// write Application and Revision status through the status subresource,
// as the source- and sync-controllers would.
var (
	clusterOnce sync.Once
	clusterCP   *controlplane.ControlPlane
	clusterErr  error
	k8s         client.Client
)

func TestMain(m *testing.M) {
	code := m.Run()
	if clusterCP != nil {
		if err := clusterCP.Stop(); err != nil {
			println("stopping control plane:", err.Error())
		}
	}
	os.Exit(code)
}

// cluster starts the control plane once and returns its kubeconfig path.
func cluster(t *testing.T) string {
	t.Helper()
	clusterOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		clusterCP, clusterErr = controlplane.Start(ctx, controlplane.Options{})
		if clusterErr != nil {
			return
		}
		scheme := runtime.NewScheme()
		utilruntime.Must(clientgoscheme.AddToScheme(scheme))
		utilruntime.Must(syncv1.AddToScheme(scheme))
		k8s, clusterErr = client.New(clusterCP.Config, client.Options{Scheme: scheme})
	})
	if clusterErr != nil {
		t.Fatalf("starting control plane: %v", clusterErr)
	}
	return clusterCP.Kubeconfig
}

// namespace creates a namespace with a fixed name, so output is stable.
func namespace(t *testing.T, name string, labels map[string]string) string {
	t.Helper()
	cluster(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if err := k8s.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	return name
}

// kubeconfigWithNamespace writes a copy of the cluster's kubeconfig whose
// current context defaults to namespace.
func kubeconfigWithNamespace(t *testing.T, namespace string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(cluster(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Contexts[cfg.CurrentContext].Namespace = namespace
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

type result struct {
	code           int
	stdout, stderr string
}

// ksync runs ksync through Run with the test cluster's kubeconfig.
func ksync(t *testing.T, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(append([]string{"ksync"}, withKubeconfig(t, args)...), &out, &errOut)
	return result{code, out.String(), errOut.String()}
}

// ksyncWithInput runs ksync with stdin, for the confirmation prompts.
func ksyncWithInput(t *testing.T, stdin io.Reader, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(append([]string{"ksync"}, withKubeconfig(t, args)...), &env{
		in: stdin, out: &out, errOut: &errOut, now: time.Now, lookupEnv: os.LookupEnv,
	})
	return result{code, out.String(), errOut.String()}
}

func withKubeconfig(t *testing.T, args []string) []string {
	for _, a := range args {
		if a == "--kubeconfig" {
			return args
		}
	}
	return append(args, "--kubeconfig", cluster(t))
}

func (r result) expect(t *testing.T, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
}

func digest(c string) string { return "sha256:" + strings.Repeat(c, 64) }

func application(namespace, name string) *syncv1.Application {
	return &syncv1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{"team": "payments"}},
		Spec: syncv1.ApplicationSpec{
			Source: syncv1.ApplicationSource{RepositoryRef: syncv1.LocalObjectReference{Name: "platform"}, Path: "envs/" + name},
		},
	}
}

// createApplication creates app and then writes its status through the
// status subresource.
func createApplication(t *testing.T, app *syncv1.Application) *syncv1.Application {
	t.Helper()
	status := app.Status
	if err := k8s.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	app.Status = status
	if err := k8s.Status().Update(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	return app
}

// createRevision creates a Revision of app and writes status through the
// status subresource, as the controllers would.
func createRevision(t *testing.T, namespace, app, name string, status syncv1.RevisionStatus) *syncv1.Revision {
	t.Helper()
	rev := &syncv1.Revision{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{syncv1.ApplicationLabel: app}},
		Spec: syncv1.RevisionSpec{
			ApplicationName: app,
			DesiredState:    syncv1.DesiredStateRef{SecretName: name, Digest: digest("e"), Objects: 1},
		},
		Status: status,
	}
	return storeRevision(t, rev)
}

// storeRevision creates rev and then writes its status through the status
// subresource.
func storeRevision(t *testing.T, rev *syncv1.Revision) *syncv1.Revision {
	t.Helper()
	status := rev.Status
	if err := k8s.Create(t.Context(), rev); err != nil {
		t.Fatal(err)
	}
	rev.Status = status
	if err := k8s.Status().Update(t.Context(), rev); err != nil {
		t.Fatal(err)
	}
	return rev
}

func getApp(t *testing.T, namespace, name string) *syncv1.Application {
	t.Helper()
	app := &syncv1.Application{}
	if err := k8s.Get(t.Context(), client.ObjectKey{Namespace: namespace, Name: name}, app); err != nil {
		t.Fatal(err)
	}
	return app
}

func ts(s string) *metav1.Time {
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	v := metav1.NewTime(tm)
	return &v
}
