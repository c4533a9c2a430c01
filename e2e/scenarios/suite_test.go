// Package scenarios runs Kuvryn Sync end to end: every service its own
// process with its own ServiceAccount, on the local control plane, against a
// Git server on loopback.
//
// Each scenario works in namespaces of its own, so the scenarios that leave
// the shared environment alone call t.Parallel and run together: they spend
// most of their time waiting on the services, not computing. Those that
// kill, restart or flood a service, stop the API server, the Git server or
// the chart servers, or list every namespace and expect it to hold still,
// do not: Go runs a package's sequential tests one at a time before its
// parallel ones. `make e2e` sets how many run at once with -parallel.
package scenarios_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/e2e/harness"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/controlplane"
	testgit "github.com/kuvryn/kuvryn-sync/pkg/testkit/git"
)

var (
	env      *harness.Env
	services *harness.Services
	// syncController and sourceController are the running replicas of
	// those services, for tests that kill and restart them.
	syncController, sourceController *harness.Process
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "kuvryn-e2e-")
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer func() {
		if os.Getenv("KEEP_E2E") == "" {
			os.RemoveAll(dir)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	root, err := controlplane.RepoRoot()
	if err != nil {
		cancel()
		fmt.Println(err)
		return 1
	}
	// The diagnosis Stages hold Pods labelled stage.diagnosis.kuvryn.io in
	// a failing state, such as a crash loop; other Pods turn Ready as ever.
	stages := filepath.Join(root, "services", "sync-controller", "internal", "diagnosis", "testdata", "kwok-stages.yaml")
	env, err = harness.Start(ctx, harness.Options{Dir: dir, Stages: []string{stages}, ControllerManagerFlags: controlplane.ParallelTestsControllerManagerFlags})
	if err != nil {
		cancel()
		fmt.Println("starting the e2e environment:", err)
		return 1
	}
	defer env.Stop()
	err = startServices(ctx)
	cancel()
	if err != nil {
		fmt.Println(err)
		return 1
	}
	code := m.Run()
	if code != 0 {
		fmt.Println(env.Logs(80))
	}
	return code
}

// startServices starts the five services, with leader
// election as in a cluster, and waits until each is ready and the admission
// webhook (failurePolicy Fail) admits requests.
func startServices(ctx context.Context) error {
	var err error
	if services, err = env.StartServices(ctx); err != nil {
		return err
	}
	syncController = services.Sync
	sourceController = services.Source
	return nil
}

// namespace creates a namespace with the "deployer" ServiceAccount. If the
// test fails, its log shows what every service logged about the namespace.
func namespace(t *testing.T, name string) string {
	t.Helper()
	if err := env.Namespace(t.Context(), name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("service logs about namespace %s:\n%s", name, env.LogsMatching(`"`+name+`"`, 200))
		}
	})
	return name
}

// eventually polls cond, failing early when a service process exits.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if err := env.Exited(); err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

func get[T client.Object](t *testing.T, obj T, ns, name string) T {
	t.Helper()
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// repository serves a Git repository with files and creates a Repository
// polling it every few seconds.
func repository(t *testing.T, ns, name string, files map[string]string) *testgit.Repo {
	t.Helper()
	return repositoryPolling(t, ns, name, files, 5*time.Second)
}

// repositoryPolling is repository with the Repository's pollInterval.
func repositoryPolling(t *testing.T, ns, name string, files map[string]string, pollInterval time.Duration) *testgit.Repo {
	t.Helper()
	return repositoryOn(t, env.Git, ns, name, files, pollInterval)
}

// repositoryOn is repositoryPolling with the repository served by server.
func repositoryOn(t *testing.T, server *testgit.Server, ns, name string, files map[string]string, pollInterval time.Duration) *testgit.Repo {
	t.Helper()
	return labelledRepository(t, server, ns, name, files, pollInterval, nil)
}

// labelledRepository is repositoryOn with the Repository's labels.
func labelledRepository(t *testing.T, server *testgit.Server, ns, name string, files map[string]string, pollInterval time.Duration, labels map[string]string) *testgit.Repo {
	t.Helper()
	r, err := server.CreateRepo(ns + "-" + name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Commit(files, "initial"); err != nil {
		t.Fatal(err)
	}
	repo := &syncv1.Repository{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: syncv1.RepositorySpec{
			Git:          syncv1.GitSource{URL: r.URL()},
			PollInterval: &metav1.Duration{Duration: pollInterval},
		},
	}
	if err := env.Client.Create(t.Context(), repo); err != nil {
		t.Fatal(err)
	}
	return r
}
