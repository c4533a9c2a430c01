package scenarios_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	testgit "github.com/kuvryn/kuvryn-sync/pkg/testkit/git"
)

// webhookToken is the shared secret of every webhook Repository here.
const webhookToken = "e2e-webhook-token"

// TestE2E_PushWebhookFetchesAtOnceAndRollsOut pushes a commit to the Git
// server and sends GitHub's signed push event to the web service's
// receiver, running as its own process under its own RBAC. The Repository
// polls only hourly, so only the webhook can make it fetch: a new Revision
// is rendered and applied, and the service counts both requests in its
// metrics.
func TestE2E_PushWebhookFetchesAtOnceAndRollsOut(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-receiver")
	gitRepo := webhookRepository(t, ns, "platform", configMapApp("v1"))
	first := waitHealthy(t, ns, "web", "")

	if _, err := gitRepo.Commit(map[string]string{"configmap.yaml": configMap("v2")}, "v2"); err != nil {
		t.Fatal(err)
	}
	receiver(t)
	accepted, unauthorized := receiverCount(t, "accepted"), receiverCount(t, "unauthorized")
	status, body := pushHook(t, ns, "platform", gitRepo.URL())
	if status != http.StatusAccepted {
		t.Fatalf("signed push: %d %q, want 202", status, body)
	}
	second := waitHealthy(t, ns, "web", first)
	cm := get(t, &corev1.ConfigMap{}, ns, "web")
	if cm.Data["version"] != "v2" {
		t.Fatalf("ConfigMap web after the push: %v, want version v2 (Revision %s)", cm.Data, second)
	}
	repo := get(t, &syncv1.Repository{}, ns, "platform")
	if at := repo.Annotations[syncv1.ReconcileRequestedAtAnnotation]; at == "" || repo.Status.LastHandledReconcileAt != at {
		t.Fatalf("Repository platform: %s %q, status.lastHandledReconcileAt %q", syncv1.ReconcileRequestedAtAnnotation, at, repo.Status.LastHandledReconcileAt)
	}

	status, _ = pushHookSigned(t, ns, "platform", gitRepo.URL(), "a guess")
	if status != http.StatusUnauthorized {
		t.Fatalf("push signed with another secret: %d, want 401", status)
	}
	if a, u := receiverCount(t, "accepted")-accepted, receiverCount(t, "unauthorized")-unauthorized; a != 1 || u != 1 {
		t.Fatalf("the web service counted %d accepted and %d unauthorized requests, want 1 and 1", a, u)
	}
}

// TestE2E_WebRefusesToStartWithoutAListener runs the web binary with no
// listener configured: it must exit with an error naming the flags instead
// of reporting ready while serving nothing.
func TestE2E_WebRefusesToStartWithoutAListener(t *testing.T) {
	t.Parallel()
	kubeconfig, err := env.Kubeconfig(t.Context(), manager.InstallName("web"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), filepath.Join(env.Root, "bin", "web"), "--kubeconfig="+kubeconfig,
		"--health-probe-bind-address=127.0.0.1:0", "--metrics-bind-address=0")
	done := make(chan struct{})
	var out []byte
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatal("web without --webhook-receiver-bind-address kept running")
	}
	if err == nil || !strings.Contains(string(out), "nothing to serve: set") || !strings.Contains(string(out), "--webhook-receiver-bind-address") {
		t.Fatalf("web without a listener: %v\n%s", err, out)
	}
}

var (
	receiverOnce sync.Once
	receiverAddr string
	// receiverMetrics serves the web service's metrics over plain HTTP.
	receiverMetrics string
	receiverErr     error
)

// receiver starts the web service with the webhook receiver, once, and
// returns its address once it listens.
func receiver(tb testing.TB) string {
	tb.Helper()
	receiverOnce.Do(func() {
		if receiverAddr, receiverErr = freeAddress(); receiverErr != nil {
			return
		}
		if receiverMetrics, receiverErr = freeAddress(); receiverErr != nil {
			return
		}
		if _, receiverErr = env.StartService(tb.Context(), "web", "--webhook-receiver-bind-address="+receiverAddr,
			"--metrics-bind-address="+receiverMetrics, "--metrics-secure=false"); receiverErr != nil {
			return
		}
		// The receiver binds only once its caches are synced.
		deadline := time.Now().Add(2 * time.Minute)
		for {
			c, err := net.Dial("tcp", receiverAddr)
			if err == nil {
				c.Close()
				return
			}
			if receiverErr = env.Exited(); receiverErr != nil {
				return
			}
			if time.Now().After(deadline) {
				receiverErr = fmt.Errorf("the webhook receiver did not listen on %s within 2 minutes: %v", receiverAddr, err)
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	if receiverErr != nil {
		tb.Fatal(receiverErr)
	}
	return receiverAddr
}

// freeAddress is a loopback address no one listens on now.
func freeAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// receiverCount reads kuvryn_sync_webhook_receiver_requests_total{result}
// from the web service's metrics.
func receiverCount(t *testing.T, result string) int {
	t.Helper()
	resp, err := http.Get("http://" + receiverMetrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	prefix := `kuvryn_sync_webhook_receiver_requests_total{result="` + result + `"} `
	for _, line := range strings.Split(string(b), "\n") {
		if n, ok := strings.CutPrefix(line, prefix); ok {
			v, err := strconv.Atoi(n)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return v
		}
	}
	t.Fatalf("the web service's metrics lack %s", prefix)
	return 0
}

// webhookRepository serves a Git repository with files and creates a
// Repository with a webhook Secret, polling only hourly.
func webhookRepository(tb testing.TB, ns, name string, files map[string]string) *testgit.Repo {
	tb.Helper()
	r, err := env.Git.CreateRepo(ns + "-" + name)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := r.Commit(files, "initial"); err != nil {
		tb.Fatal(err)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-webhook", Namespace: ns},
		StringData: map[string]string{"token": webhookToken},
	}
	repo := &syncv1.Repository{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: syncv1.RepositorySpec{
			Git:          syncv1.GitSource{URL: r.URL()},
			PollInterval: &metav1.Duration{Duration: time.Hour},
			Webhook:      &syncv1.WebhookSpec{SecretRef: syncv1.LocalObjectReference{Name: secret.Name}},
		},
	}
	if err := env.Client.Create(tb.Context(), secret); err != nil {
		tb.Fatal(err)
	}
	if err := env.Client.Create(tb.Context(), repo); err != nil {
		tb.Fatal(err)
	}
	return r
}

// pushHook sends GitHub's push event for the repository at url, signed
// with webhookToken, and returns the status and body.
func pushHook(tb testing.TB, ns, name, url string) (int, string) {
	tb.Helper()
	return pushHookSigned(tb, ns, name, url, webhookToken)
}

func pushHookSigned(tb testing.TB, ns, name, url, token string) (int, string) {
	tb.Helper()
	body := []byte(fmt.Sprintf(`{"ref":"refs/heads/main","repository":{"name":%q,"clone_url":%q,"html_url":%q}}`,
		name, url, strings.TrimSuffix(url, ".git")))
	mac := hmac.New(sha256.New, []byte(token))
	mac.Write(body)
	req, err := http.NewRequestWithContext(tb.Context(), http.MethodPost,
		"http://"+receiver(tb)+"/hooks/"+ns+"/"+name, bytes.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "push")
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// configMapApp is a repository declaring the Application web, which
// applies one ConfigMap.
func configMapApp(version string) map[string]string {
	return map[string]string{
		".ksync.yaml": `metadata: {name: web}
spec:
  source: {path: ., render: {type: yaml}}
  serviceAccountName: deployer
  sync: {automatic: true}
`,
		"configmap.yaml": configMap(version),
	}
}

func configMap(version string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {version: " + version + "}\n"
}
