// Command demo runs Kuvryn Sync for real on the local control plane: a Git
// repository with example Applications, every service as its own process,
// in the background until `demo down`.
//
//	demo up    start in the background and wait until the Applications are synced
//	demo down  stop it
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/e2e/harness"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/controlplane"
)

const (
	namespace   = "demo"
	upTimeout   = 10 * time.Minute
	syncTimeout = 5 * time.Minute
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: demo up|down")
		os.Exit(2)
	}
	root, err := controlplane.RepoRoot()
	if err != nil {
		fail(err)
	}
	dir := filepath.Join(root, ".demo")
	switch os.Args[1] {
	case "up":
		err = up(root, dir)
	case "down":
		err = down(dir)
	case "run":
		err = run(root, dir)
	default:
		fmt.Fprintln(os.Stderr, "usage: demo up|down")
		os.Exit(2)
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "demo:", err)
	os.Exit(1)
}

// up starts `demo run` detached and waits for it to report ready.
func up(root, dir string) error {
	if pid, ok := running(dir); ok {
		return fmt.Errorf("already running (pid %d); run make demo-down first", pid)
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	// Keep a copy: `go run` removes its binary when up exits.
	bin := filepath.Join(dir, "demo")
	if err := copyFile(self, bin); err != nil {
		return err
	}
	logFile, err := os.Create(filepath.Join(dir, "demo.log"))
	if err != nil {
		return err
	}
	defer logFile.Close()
	cmd := exec.Command(bin, "run")
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "pid"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	fmt.Println("Starting the control plane, Git server and services (logs in .demo/)...")
	deadline := time.After(upTimeout)
	for {
		select {
		case err := <-exited:
			return fmt.Errorf("demo stopped: %v; see %s", err, filepath.Join(dir, "demo.log"))
		case <-deadline:
			return fmt.Errorf("not ready after %s; see %s (make demo-down stops it)", upTimeout, filepath.Join(dir, "demo.log"))
		case <-time.After(time.Second):
		}
		if msg, err := os.ReadFile(filepath.Join(dir, "ready")); err == nil {
			fmt.Print(string(msg))
			return showApps(root, dir)
		}
	}
}

func showApps(root, dir string) error {
	kubeconfig := filepath.Join(dir, "kubeconfig")
	cmd := exec.Command(filepath.Join(root, "bin", "ksync"), "apps", "-n", namespace)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	fmt.Printf("\n$ KUBECONFIG=%s bin/ksync apps -n %s\n", kubeconfig, namespace)
	if err := cmd.Run(); err != nil {
		return err
	}
	fmt.Printf(`
Use it:
  export KUBECONFIG=%s
  bin/ksync apps -n demo            # Applications, sync and health
  bin/ksync plan payments -n demo   # the plan waiting for approval
  bin/ksync approve payments -n demo
  kubectl get repos,apps,revisions -n demo
Stop it with: make demo-down
`, kubeconfig)
	return nil
}

// down stops the background demo.
func down(dir string) error {
	pid, ok := running(dir)
	if !ok {
		fmt.Println("demo is not running")
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return err
	}
	for range 60 {
		if _, ok := running(dir); !ok {
			fmt.Println("demo stopped")
			return nil
		}
		time.Sleep(500 * time.Millisecond)
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	return errors.New("demo did not stop within 30s; killed it")
}

func running(dir string) (int, bool) {
	data, err := os.ReadFile(filepath.Join(dir, "pid"))
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(string(data))
	if err != nil || syscall.Kill(pid, 0) != nil {
		return 0, false
	}
	return pid, true
}

// run is the background process: it owns the control plane and services
// until SIGTERM.
func run(root, dir string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	defer os.Remove(filepath.Join(dir, "pid"))

	env, err := harness.Start(ctx, harness.Options{Root: root, Dir: dir})
	if err != nil {
		return err
	}
	defer env.Stop()
	if err := copyFile(env.CP.Kubeconfig, filepath.Join(dir, "kubeconfig")); err != nil {
		return err
	}
	if err := env.Namespace(ctx, namespace); err != nil {
		return err
	}
	services, err := env.StartServices(ctx)
	if err != nil {
		return err
	}
	sinkLog, err := startNotifications(ctx, env, services, dir)
	if err != nil {
		return err
	}
	repo, err := env.Git.CreateRepo("platform")
	if err != nil {
		return err
	}
	if _, err := repo.Commit(exampleRepository, "Example Applications"); err != nil {
		return err
	}
	if err := env.Client.Create(ctx, &syncv1.Repository{
		ObjectMeta: metav1.ObjectMeta{Name: "platform", Namespace: namespace},
		Spec: syncv1.RepositorySpec{
			Git:          syncv1.GitSource{URL: repo.URL(), Revision: "main"},
			PollInterval: &metav1.Duration{Duration: 30 * time.Second},
		},
	}); err != nil {
		return err
	}
	if err := waitSynced(ctx, env); err != nil {
		fmt.Println(env.Logs(40))
		return err
	}
	token, err := env.ViewerToken(ctx, namespace, "console-viewer", 24*time.Hour)
	if err != nil {
		return err
	}
	tokenFile := filepath.Join(dir, "viewer-token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		return err
	}
	msg := fmt.Sprintf("Kuvryn Sync is running, every service its own process:\n%s"+
		"Push webhook receiver: %s/hooks/<namespace>/<repository>\nGit repository: %s\n"+
		"Notifications of Application payments (NotificationSink audit): %s\n"+
		"Web console: %s (read-only; sign in with the viewer token in %s, valid 24h:)\n%s\n",
		services.Describe(), services.ReceiverURL, repo.URL(), sinkLog, services.ConsoleURL, tokenFile, token)
	if err := os.WriteFile(filepath.Join(dir, "ready"), []byte(msg), 0o644); err != nil {
		return err
	}
	fmt.Print(msg)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(2 * time.Second):
			if err := env.Exited(); err != nil {
				fmt.Println(env.Logs(40))
				return err
			}
		}
	}
}

// startNotifications points the NotificationSink audit, which the payments
// Application subscribes to, at the harness's https sink, and makes the sink
// print every delivery it receives, signature checked, into a log whose
// path it returns.
func startNotifications(ctx context.Context, env *harness.Env, services *harness.Services, dir string) (string, error) {
	path := filepath.Join(dir, "sink.log")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return "", err
	}
	services.Sink.PrintTo(f)
	return path, env.ApplyYAML(ctx, []byte(fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata: {name: audit-webhook, namespace: %[1]s}
stringData: {url: %[2]q, hmacKey: %[3]q}
---
apiVersion: sync.kuvryn.io/v1alpha1
kind: NotificationSink
metadata: {name: audit, namespace: %[1]s}
spec:
  type: webhook
  secretRef: {name: audit-webhook}
`, namespace, services.Sink.URL("/kuvryn-sync"), harness.SinkKey)))
}

// waitSynced waits until every automatic Application is Synced and Healthy
// and every manual one waits for approval.
func waitSynced(ctx context.Context, env *harness.Env) error {
	ctx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	for {
		if err := env.Exited(); err != nil {
			return err
		}
		var apps syncv1.ApplicationList
		if err := env.Client.List(ctx, &apps, client.InNamespace(namespace)); err == nil && len(apps.Items) == 4 {
			done := true
			for _, a := range apps.Items {
				if a.Spec.Sync.Automatic {
					done = done && a.Status.Sync == syncv1.SyncStateSynced && a.Status.Health == syncv1.HealthHealthy
				} else {
					done = done && meta.IsStatusConditionTrue(a.Status.Conditions, syncv1.ConditionAwaitingApproval)
				}
			}
			if done {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("Applications not synced within %s", syncTimeout)
		case <-time.After(time.Second):
		}
	}
}

func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, data, 0o755)
}
