// Package harness runs Kuvryn Sync for real: the local control plane with
// kwok nodes, the RBAC from deploy/, a Git server on loopback, and each
// service as its own OS process authenticated with its own ServiceAccount's
// token, so a missing permission fails instead of hiding behind admin
// rights. The e2e tests and `make demo` both use it.
package harness

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/controlplane"
	testgit "github.com/kuvryn/kuvryn-sync/pkg/testkit/git"
)

// SystemNamespace holds the services' ServiceAccounts.
const SystemNamespace = "kuvryn-sync-system"

// Options configure Start.
type Options struct {
	// Root is the repository root; default found from the working directory.
	Root string
	// Dir receives kubeconfigs, logs and caches; it must exist.
	Dir string
	// GitRoot keeps the Git server's repositories; default under Dir.
	GitRoot string
	// Stages are more kwok Stage files, such as those that hold labelled
	// Pods in a failing state; see controlplane.Options.Stages.
	Stages []string
	// ControllerManagerFlags are more kube-controller-manager flags; see
	// controlplane.Options.ControllerManagerFlags.
	ControllerManagerFlags []string
}

// Env is a running Kuvryn Sync.
type Env struct {
	Root string
	Dir  string
	CP   *controlplane.ControlPlane
	Git  *testgit.Server
	// Charts serve Helm charts from an OCI registry and a Helm repository.
	Charts *ChartServers
	// Client is an admin client.
	Client client.Client

	mu    sync.Mutex
	procs []*Process
	// webhookCA signed the certificate every sync-controller replica serves.
	webhookCA []byte
	// closers stop what StartServices serves besides the services.
	closers []func()
}

// Start starts the control plane with kwok nodes, installs deploy/rbac and
// starts the Git server. Services are started with StartService.
func Start(ctx context.Context, o Options) (env *Env, err error) {
	if o.Root == "" {
		if o.Root, err = controlplane.RepoRoot(); err != nil {
			return nil, err
		}
	}
	env = &Env{Root: o.Root, Dir: o.Dir}
	defer func() {
		if err != nil {
			env.Stop()
			env = nil
		}
	}()
	cpDir := filepath.Join(o.Dir, "controlplane")
	if err = os.MkdirAll(cpDir, 0o755); err != nil {
		return nil, err
	}
	if env.CP, err = controlplane.Start(ctx, controlplane.Options{Full: true, Dir: cpDir, Stages: o.Stages, ControllerManagerFlags: o.ControllerManagerFlags}); err != nil {
		return nil, err
	}
	if env.Client, err = client.New(env.CP.Config, client.Options{Scheme: manager.Scheme()}); err != nil {
		return nil, err
	}
	if err = env.Install(ctx, filepath.Join(o.Root, "deploy", "rbac")); err != nil {
		return nil, err
	}
	if o.GitRoot == "" {
		o.GitRoot = filepath.Join(o.Dir, "git")
	}
	if err = os.MkdirAll(o.GitRoot, 0o755); err != nil {
		return nil, err
	}
	if env.Git, err = testgit.NewServer(testgit.Options{Root: o.GitRoot}); err != nil {
		return nil, err
	}
	if env.Charts, err = StartChartServers(); err != nil {
		return nil, err
	}
	return env, nil
}

// Install applies every YAML file in dir (kustomization.yaml aside) with
// Server-Side Apply as admin.
func (e *Env) Install(ctx context.Context, dir string) error {
	objs, err := controlplane.ReadManifests(dir)
	if err != nil {
		return err
	}
	return e.apply(ctx, objs)
}

// ApplyYAML applies a multi-document YAML stream as admin.
func (e *Env) ApplyYAML(ctx context.Context, data []byte) error {
	objs, err := controlplane.DecodeManifests(data)
	if err != nil {
		return err
	}
	return e.apply(ctx, objs)
}

func (e *Env) apply(ctx context.Context, objs []*unstructured.Unstructured) error {
	for _, u := range objs {
		if err := e.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u),
			client.FieldOwner("kuvryn-e2e"), client.ForceOwnership); err != nil {
			return fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
	return nil
}

// Kubeconfig writes a kubeconfig holding a fresh token of the ServiceAccount
// name in SystemNamespace and returns its path.
func (e *Env) Kubeconfig(ctx context.Context, serviceAccount string) (string, error) {
	cs, err := kubernetes.NewForConfig(e.CP.Config)
	if err != nil {
		return "", err
	}
	expiry := int64(24 * time.Hour / time.Second)
	tr, err := cs.CoreV1().ServiceAccounts(SystemNamespace).CreateToken(ctx, serviceAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("token for ServiceAccount %s/%s: %w", SystemNamespace, serviceAccount, err)
	}
	path := filepath.Join(e.Dir, serviceAccount+".kubeconfig")
	return path, e.writeKubeconfig(path, serviceAccount, &clientcmdapi.AuthInfo{Token: tr.Status.Token})
}

// writeKubeconfig writes a kubeconfig for the control plane whose one
// context authenticates as user with auth.
func (e *Env) writeKubeconfig(path, user string, auth *clientcmdapi.AuthInfo) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: e.CP.Config.Host, CertificateAuthorityData: e.CP.Config.CAData}
	cfg.AuthInfos[user] = auth
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: user}
	cfg.CurrentContext = "local"
	return clientcmd.WriteToFile(*cfg, path)
}

// Process is one running service.
type Process struct {
	Name    string
	LogPath string
	// HealthAddr serves /healthz and /readyz.
	HealthAddr string
	// logStart is the size of LogPath when this process started: a
	// restarted service appends to the log of the one before.
	logStart int64
	args     []string
	cmd      *exec.Cmd
	done     chan struct{}
	stopped  bool
	err      error
}

// StartService starts bin/<name> as its own process with the token of the
// service's ServiceAccount in deploy/rbac (manager.InstallName) and the given
// flags; probes bind to a free loopback port and metrics are off. A second
// replica of a running service logs to <name>-2.log, and so on.
func (e *Env) StartService(ctx context.Context, name string, args ...string) (*Process, error) {
	kubeconfig, err := e.Kubeconfig(ctx, manager.InstallName(name))
	if err != nil {
		return nil, err
	}
	port, err := controlplane.FreePort()
	if err != nil {
		return nil, err
	}
	healthAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	logPath := e.freeLog(name)
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	info, err := logFile.Stat()
	if err != nil {
		logFile.Close()
		return nil, err
	}
	all := append([]string{
		"--kubeconfig=" + kubeconfig,
		"--health-probe-bind-address=" + healthAddr,
		"--metrics-bind-address=0",
		"--zap-devel",
	}, args...)
	cmd := exec.Command(filepath.Join(e.Root, "bin", name), all...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s (run make build first): %w", name, err)
	}
	p := &Process{Name: name, LogPath: logPath, HealthAddr: healthAddr, logStart: info.Size(), args: args, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	e.mu.Lock()
	e.procs = append(e.procs, p)
	e.mu.Unlock()
	return p, nil
}

// freeLog is the log of a new replica of the service name: <name>.log,
// else <name>-2.log and so on, the first that no running replica writes, so
// that two running processes never share a log (Logged would read the
// other's lines), while a restarted service appends to the log of the one
// it replaces.
func (e *Env) freeLog(name string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	taken := map[string]bool{}
	for _, p := range e.procs {
		if p.Name == name && !p.Exited() {
			taken[p.LogPath] = true
		}
	}
	for n := 1; ; n++ {
		path := filepath.Join(e.Dir, name+".log")
		if n > 1 {
			path = filepath.Join(e.Dir, fmt.Sprintf("%s-%d.log", name, n))
		}
		if !taken[path] {
			return path
		}
	}
}

// Exited reports whether the process has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Logged reports whether this process, not one before it in the same log,
// logged a line containing substr.
func (p *Process) Logged(substr string) (bool, error) {
	f, err := os.Open(p.LogPath)
	if err != nil {
		return false, err
	}
	defer f.Close()
	if _, err := f.Seek(p.logStart, io.SeekStart); err != nil {
		return false, err
	}
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for s.Scan() {
		if strings.Contains(s.Text(), substr) {
			return true, nil
		}
	}
	return false, s.Err()
}

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Args are the flags the service was started with, beyond the harness's.
func (p *Process) Args() []string { return p.args }

// WaitReady polls /readyz until the service answers 200, failing early if
// it exits.
func (p *Process) WaitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	url := "http://" + p.HealthAddr + "/readyz"
	for {
		if p.Exited() {
			return fmt.Errorf("%s exited before it was ready: %v; see %s", p.Name, p.err, p.LogPath)
		}
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready within %s; see %s", p.Name, timeout, p.LogPath)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Restart starts a stopped or killed service again with the flags it had;
// its log continues in the same file.
func (e *Env) Restart(ctx context.Context, p *Process) (*Process, error) {
	select {
	case <-p.done:
	default:
		return nil, fmt.Errorf("%s is still running; stop or kill it first", p.Name)
	}
	return e.StartService(ctx, p.Name, p.args...)
}

// Kill sends SIGKILL and waits for the process to exit.
func (p *Process) Kill() {
	p.stopped = true
	_ = p.cmd.Process.Kill()
	<-p.done
}

// Pause stops the process with SIGSTOP, as a stalled node would: it keeps
// what it holds and does nothing until Resume.
func (p *Process) Pause() error { return p.cmd.Process.Signal(syscall.SIGSTOP) }

// Resume continues a paused process with SIGCONT.
func (p *Process) Resume() error { return p.cmd.Process.Signal(syscall.SIGCONT) }

// Stop sends SIGTERM and waits up to ten seconds before killing.
func (p *Process) Stop() {
	p.stopped = true
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// Exited reports a process that stopped without being asked to.
func (e *Env) Exited() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, p := range e.procs {
		select {
		case <-p.done:
			if !p.stopped {
				return fmt.Errorf("%s exited unexpectedly: %v", p.Name, p.err)
			}
		default:
		}
	}
	return nil
}

// Logs returns the last lines of every service's log.
func (e *Env) Logs(lines int) string { return e.LogsMatching("", lines) }

// LogsMatching returns, per service, the last lines of its log that contain
// substr, such as a test's namespace.
func (e *Env) LogsMatching(substr string, lines int) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var b strings.Builder
	printed := map[string]bool{}
	for _, p := range e.procs {
		// A restarted service appends to its log.
		if printed[p.LogPath] {
			continue
		}
		printed[p.LogPath] = true
		fmt.Fprintf(&b, "===== %s (%s) =====\n", p.Name, p.LogPath)
		b.WriteString(tail(p.LogPath, substr, lines))
	}
	return b.String()
}

func tail(path, substr string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error() + "\n"
	}
	defer f.Close()
	var ring []string
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for s.Scan() {
		if !strings.Contains(s.Text(), substr) {
			continue
		}
		ring = append(ring, s.Text())
		if len(ring) > n {
			ring = ring[1:]
		}
	}
	return strings.Join(ring, "\n") + "\n"
}

// Stop stops every service, the Git server and the control plane.
func (e *Env) Stop() {
	e.mu.Lock()
	procs := e.procs
	e.mu.Unlock()
	for _, p := range procs {
		select {
		case <-p.done:
		default:
			p.Stop()
		}
	}
	for _, c := range e.closers {
		c()
	}
	if e.Git != nil {
		_ = e.Git.Close()
	}
	if e.Charts != nil {
		e.Charts.Close()
	}
	if e.CP != nil {
		_ = e.CP.Stop()
	}
}

// Namespace creates a namespace with a ServiceAccount "deployer" that may
// manage everything in it, the identity Applications apply as.
func (e *Env) Namespace(ctx context.Context, name string) error {
	return e.ApplyYAML(ctx, []byte(fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata: {name: %[1]s}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: deployer, namespace: %[1]s}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: deployer-admin, namespace: %[1]s}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: admin}
subjects: [{kind: ServiceAccount, name: deployer, namespace: %[1]s}]
`, name)))
}

// UserKubeconfig writes a kubeconfig authenticating as a new user with a
// client certificate, for running ksync as someone other than admin.
func (e *Env) UserKubeconfig(user, path string) error {
	cfg, err := e.CP.AddUser(user)
	if err != nil {
		return err
	}
	return e.writeKubeconfig(path, user, &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData})
}
