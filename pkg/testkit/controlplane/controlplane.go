// Package controlplane runs a real Kubernetes control plane on loopback for
// tests and the demo: etcd and kube-apiserver (through controller-runtime's
// envtest, with client-certificate authentication and RBAC on), and, when
// asked, kube-controller-manager, kube-scheduler and kwok with fake nodes so
// that Deployments become Available and Jobs Complete. The binaries are built
// by tools/controlplane/build.sh into bin/.
package controlplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Options configure Start. Zero values pick the defaults in the comments.
type Options struct {
	// BinDir holds etcd, kube-apiserver and, for Full, kube-controller-manager,
	// kube-scheduler, kwok and kwok-stages.yaml. Default: $KUBEBUILDER_ASSETS,
	// else bin/ at the repository root.
	BinDir string
	// CRDDir is installed once the API server is up. Default: deploy/crds at
	// the repository root. Set to "-" to install none.
	CRDDir string
	// Full also runs kube-controller-manager, kube-scheduler and kwok.
	Full bool
	// Nodes is the number of kwok nodes for Full; default 1.
	Nodes int
	// Stages are more kwok Stage files for Full, loaded after kwok's own
	// fast Stages in BinDir, such as a test's Stages that hold Pods in a
	// failing state.
	Stages []string
	// Dir receives the kubeconfig and process logs; default a temporary
	// directory removed by Stop.
	Dir string
	// Log receives the output of the processes Start runs itself; default
	// files under Dir.
	Log io.Writer
	// APIServerFlags are more kube-apiserver flags, name without the leading
	// dashes to value, set over envtest's own, such as
	// "authentication-config" for a test that trusts an OIDC issuer.
	APIServerFlags map[string]string
	// ControllerManagerFlags are more kube-controller-manager flags for
	// Full, whole arguments such as "--kube-api-qps=200", after the defaults
	// so that they win; a benchmark uses them to lift the manager's client
	// rate, which otherwise bounds how fast Deployments become observed.
	ControllerManagerFlags []string
}

// ParallelTestsControllerManagerFlags lift kube-controller-manager's client
// rate for a package whose tests roll out Deployments and Jobs several at a
// time: its default 20 requests a second makes them wait on each other.
var ParallelTestsControllerManagerFlags = []string{"--kube-api-qps=200", "--kube-api-burst=400"}

// ControlPlane is a running control plane.
type ControlPlane struct {
	// Config authenticates as a member of system:masters.
	Config *rest.Config
	// Kubeconfig is the path of a kubeconfig file for Config.
	Kubeconfig string
	// Dir holds the kubeconfig and logs.
	Dir string

	env     *envtest.Environment
	ownDir  bool
	cancel  context.CancelFunc
	procs   []*exec.Cmd
	waitAll sync.WaitGroup
	// apiserver is the kube-apiserver StartAPIServer started, closing
	// apiserverDone when it exits; apiserverArgs are the flags of the
	// first one, which envtest started.
	apiserver     *exec.Cmd
	apiserverDone chan struct{}
	apiserverArgs []string
}

// Start starts the control plane and returns once the API server answers,
// the CRDs are established and, for Full, every kwok node is Ready.
func Start(ctx context.Context, o Options) (cp *ControlPlane, err error) {
	root, rootErr := RepoRoot()
	if o.BinDir == "" {
		o.BinDir = os.Getenv("KUBEBUILDER_ASSETS")
	}
	if o.BinDir == "" {
		if rootErr != nil {
			return nil, rootErr
		}
		o.BinDir = filepath.Join(root, "bin")
	}
	if o.CRDDir == "" {
		if rootErr != nil {
			return nil, rootErr
		}
		o.CRDDir = filepath.Join(root, "deploy", "crds")
	}
	if o.Nodes == 0 {
		o.Nodes = 1
	}
	for _, b := range binaries(o.Full) {
		if _, err := os.Stat(filepath.Join(o.BinDir, b)); err != nil {
			return nil, fmt.Errorf("control plane binary %s missing in %s: run `make testbin` first", b, o.BinDir)
		}
	}

	cp = &ControlPlane{Dir: o.Dir}
	if cp.Dir == "" {
		if cp.Dir, err = os.MkdirTemp("", "kuvryn-controlplane-"); err != nil {
			return nil, err
		}
		cp.ownDir = true
	}
	// A failed start returns nil, which clears cp before this runs.
	started := cp
	defer func() {
		if err != nil {
			_ = started.Stop()
		}
	}()

	// Test packages start their control planes side by side on a busy
	// machine: envtest's 20s for kube-apiserver to turn ready and 10s for
	// the CRDs to be served are too short there.
	cp.env = &envtest.Environment{
		BinaryAssetsDirectory:    o.BinDir,
		ErrorIfCRDPathMissing:    true,
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
		CRDInstallOptions:        envtest.CRDInstallOptions{MaxTime: time.Minute},
	}
	if o.CRDDir != "-" {
		cp.env.CRDDirectoryPaths = []string{o.CRDDir}
	}
	for name, value := range o.APIServerFlags {
		cp.env.ControlPlane.GetAPIServer().Configure().Set(name, value)
	}
	if _, err = cp.env.Start(); err != nil {
		return nil, fmt.Errorf("starting etcd and kube-apiserver: %w", err)
	}

	admin, err := cp.env.AddUser(envtest.User{Name: "kuvryn-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, err
	}
	cp.Config = admin.Config()
	// Tests run several at a time through this one admin config; client-go's
	// 5 requests a second would make them wait on each other, not on the
	// API server.
	cp.Config.QPS = -1
	kubeconfig, err := admin.KubeConfig()
	if err != nil {
		return nil, err
	}
	cp.Kubeconfig = filepath.Join(cp.Dir, "kubeconfig")
	if err = os.WriteFile(cp.Kubeconfig, kubeconfig, 0o600); err != nil {
		return nil, err
	}

	if !o.Full {
		return cp, nil
	}
	procCtx, cancel := context.WithCancel(context.Background())
	cp.cancel = cancel
	if err = cp.startComponents(procCtx, o); err != nil {
		return nil, err
	}
	if err = cp.createNodes(ctx, o.Nodes); err != nil {
		return nil, err
	}
	return cp, nil
}

func binaries(full bool) []string {
	b := []string{"etcd", "kube-apiserver"}
	if full {
		b = append(b, "kube-controller-manager", "kube-scheduler", "kwok", "kwok-stages.yaml")
	}
	return b
}

func (cp *ControlPlane) startComponents(ctx context.Context, o Options) error {
	apiserver := cp.env.ControlPlane.APIServer
	caFile := filepath.Join(cp.Dir, "ca.crt")
	if err := os.WriteFile(caFile, apiserver.SecureServing.CA, 0o600); err != nil {
		return err
	}
	components := []struct {
		name string
		args []string
	}{
		{"kube-controller-manager", append([]string{
			"--kubeconfig=" + cp.Kubeconfig,
			"--authentication-kubeconfig=" + cp.Kubeconfig,
			"--authorization-kubeconfig=" + cp.Kubeconfig,
			"--secure-port=0",
			"--leader-elect=false",
			"--controllers=*",
			"--use-service-account-credentials=false",
			"--service-account-private-key-file=" + filepath.Join(apiserver.CertDir, "sa-signer.key"),
			"--root-ca-file=" + caFile,
			"--concurrent-deployment-syncs=10",
			"--concurrent-replicaset-syncs=10",
			"--concurrent-job-syncs=10",
			// kwok renews its nodes' heartbeats from the same busy cores as
			// the tests; a late renewal must not mark a node NotReady, whose
			// taint leaves new Pods in the scheduler's unschedulable queue
			// for minutes after the node is Ready again.
			"--node-monitor-grace-period=10m",
		}, o.ControllerManagerFlags...)},
		{"kube-scheduler", []string{
			"--kubeconfig=" + cp.Kubeconfig,
			"--authentication-kubeconfig=" + cp.Kubeconfig,
			"--authorization-kubeconfig=" + cp.Kubeconfig,
			"--secure-port=0",
			"--leader-elect=false",
		}},
		{"kwok", []string{
			"--kubeconfig=" + cp.Kubeconfig,
			"--config=" + strings.Join(append([]string{filepath.Join(o.BinDir, "kwok-stages.yaml")}, o.Stages...), ","),
			"--manage-all-nodes=false",
			"--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
			"--manage-nodes-with-label-selector=",
			"--disregard-status-with-annotation-selector=kwok.x-k8s.io/status=custom",
			"--disregard-status-with-label-selector=",
			"--cidr=10.0.0.1/24",
			"--node-ip=10.0.0.1",
		}},
	}
	for _, c := range components {
		out := o.Log
		if out == nil {
			f, err := os.Create(filepath.Join(cp.Dir, c.name+".log"))
			if err != nil {
				return err
			}
			out = f
		}
		cmd := exec.CommandContext(ctx, filepath.Join(o.BinDir, c.name), c.args...)
		cmd.Stdout, cmd.Stderr = out, out
		cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
		cmd.WaitDelay = 10 * time.Second
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("starting %s: %w", c.name, err)
		}
		cp.procs = append(cp.procs, cmd)
		cp.waitAll.Add(1)
		go func() { defer cp.waitAll.Done(); _ = cmd.Wait() }()
	}
	return nil
}

// createNodes registers kwok nodes and waits until kwok reports them Ready
// and the node lifecycle controller has lifted the not-ready taint.
func (cp *ControlPlane) createNodes(ctx context.Context, n int) error {
	cs, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		return err
	}
	for i := range n {
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name:        "kwok-node-" + strconv.Itoa(i),
				Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
				Labels: map[string]string{
					"type": "kwok", "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
					"kubernetes.io/hostname": "kwok-node-" + strconv.Itoa(i),
				},
			},
			Status: corev1.NodeStatus{
				Allocatable: nodeResources(),
				Capacity:    nodeResources(),
			},
		}
		if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating node %s: %w", node.Name, err)
		}
	}
	return pollUntil(ctx, 2*time.Minute, func() (bool, error) {
		if err := cp.exited(); err != nil {
			return false, err
		}
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		ready := 0
		for _, nd := range nodes.Items {
			if nodeReady(nd) {
				ready++
			}
		}
		return ready == n, nil
	})
}

func nodeResources() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("1000"),
	}
}

func nodeReady(n corev1.Node) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable {
			return false
		}
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// exited reports a component process that stopped on its own.
func (cp *ControlPlane) exited() error {
	for _, p := range cp.procs {
		if p.ProcessState != nil {
			return fmt.Errorf("%s exited: %s (logs in %s)", filepath.Base(p.Path), p.ProcessState, cp.Dir)
		}
	}
	return nil
}

func pollUntil(ctx context.Context, timeout time.Duration, f func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := f()
		if err != nil || ok {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("control plane not ready: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// AddUser returns a config that authenticates as a new user with a client
// certificate, for tests that act as someone without admin rights.
func (cp *ControlPlane) AddUser(name string, groups ...string) (*rest.Config, error) {
	u, err := cp.env.AddUser(envtest.User{Name: name, Groups: groups}, nil)
	if err != nil {
		return nil, err
	}
	return u.Config(), nil
}

// Impersonate returns a copy of the admin config that impersonates user.
func (cp *ControlPlane) Impersonate(user string, groups ...string) *rest.Config {
	c := rest.CopyConfig(cp.Config)
	c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	return c
}

// Stop stops every process and removes the working directory Start created.
func (cp *ControlPlane) Stop() error {
	if cp.cancel != nil {
		cp.cancel()
		cp.waitAll.Wait()
	}
	var err error
	if cp.apiserver != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err = cp.KillAPIServer(ctx)
		cancel()
	}
	if cp.env != nil {
		err = errors.Join(err, cp.env.Stop())
	}
	if cp.ownDir {
		err = errors.Join(err, os.RemoveAll(cp.Dir))
	}
	return err
}

// RepoRoot finds the repository root: the nearest directory above the
// working directory holding go.work.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("repository root (go.work) not found above the working directory")
		}
		dir = parent
	}
}
