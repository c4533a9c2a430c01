package controller_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/controlplane"
	testgit "github.com/kuvryn/kuvryn-sync/pkg/testkit/git"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/logbuffer"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/controller"
)

var (
	k8s      client.WithWatch
	git      *testgit.Server
	cacheDir string
	// logs holds every line the manager logs, at every verbosity, and what
	// client-go logs through klog, so tests can assert what never appears
	// in them.
	logs logbuffer.Buffer
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	logger := zap.New(zap.WriteTo(&logs), zap.Level(zapcore.Level(math.MinInt8)))
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	startCtx, startCancel := context.WithTimeout(ctx, 2*time.Minute)
	cp, err := controlplane.Start(startCtx, controlplane.Options{})
	startCancel()
	if err != nil {
		fmt.Println("starting control plane:", err)
		return 1
	}
	defer cp.Stop()

	if git, err = testgit.NewServer(testgit.Options{}); err != nil {
		fmt.Println("starting Git server:", err)
		return 1
	}
	defer git.Close()

	if cacheDir, err = os.MkdirTemp("", "source-cache-"); err != nil {
		fmt.Println(err)
		return 1
	}
	defer os.RemoveAll(cacheDir)

	mgr, err := manager.NewWithOptions(manager.Service{Name: "source-controller"},
		manager.Options{MetricsBindAddress: "0", HealthProbeBindAddress: "0"}, cp.Config)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	if err := controller.Setup(ctx, mgr, controller.Options{CacheDir: cacheDir, Concurrent: controller.DefaultConcurrent}); err != nil {
		fmt.Println(err)
		return 1
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	if k8s, err = client.NewWithWatch(cp.Config, client.Options{Scheme: mgr.GetScheme()}); err != nil {
		fmt.Println(err)
		return 1
	}
	code := m.Run()
	cancel()
	if err := <-done; err != nil {
		fmt.Println("manager:", err)
	}
	return code
}

// newNamespace creates a namespace for one test.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "src-"}}
	if err := k8s.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// newRepository serves a new Git repository and creates a Repository for it.
func newRepository(t *testing.T, ns, name string, files map[string]string) (*testgit.Repo, *syncv1.Repository) {
	t.Helper()
	return newLabelledRepository(t, ns, name, files, nil)
}

// newLabelledRepository is newRepository with the Repository's labels.
func newLabelledRepository(t *testing.T, ns, name string, files map[string]string, labels map[string]string) (*testgit.Repo, *syncv1.Repository) {
	t.Helper()
	gitRepo, err := git.CreateRepo(ns + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gitRepo.Commit(files, "initial"); err != nil {
		t.Fatal(err)
	}
	repo := &syncv1.Repository{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: syncv1.RepositorySpec{
			Git:          syncv1.GitSource{URL: gitRepo.URL(), Revision: "main"},
			PollInterval: &metav1.Duration{Duration: time.Hour},
		},
	}
	if err := k8s.Create(t.Context(), repo); err != nil {
		t.Fatal(err)
	}
	return gitRepo, repo
}

// requestFetch stamps the annotation the push webhook receiver sets.
func requestFetch(t *testing.T, repo *syncv1.Repository) {
	t.Helper()
	patch := client.MergeFrom(repo.DeepCopy())
	if repo.Annotations == nil {
		repo.Annotations = map[string]string{}
	}
	repo.Annotations[syncv1.ReconcileRequestedAtAnnotation] = time.Now().Format(time.RFC3339Nano)
	if err := k8s.Patch(t.Context(), repo, patch); err != nil {
		t.Fatal(err)
	}
}

// eventually polls cond until it holds or the timeout passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func get[T client.Object](t *testing.T, obj T, ns, name string) T {
	t.Helper()
	if err := k8s.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

func revisionsOf(t *testing.T, ns, app string) []syncv1.Revision {
	t.Helper()
	return revisionsLabelled(t, ns, syncv1.ApplicationLabel, app)
}

func revisionsLabelled(t *testing.T, ns, label, value string) []syncv1.Revision {
	t.Helper()
	var list syncv1.RevisionList
	if err := k8s.List(t.Context(), &list, client.InNamespace(ns), client.MatchingLabels{label: value}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}
