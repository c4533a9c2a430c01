package controlplane

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
)

// KillAPIServer kills kube-apiserver with SIGKILL, as a crash or an OOM
// kill would, and waits until it has exited. (On SIGTERM it drains its
// clients' requests for a minute first.) etcd, the certificates, the users
// and every other component stay, so StartAPIServer brings the same API
// server back on the same address with the same data.
func (cp *ControlPlane) KillAPIServer(ctx context.Context) error {
	if cp.apiserver != nil {
		cmd, done := cp.apiserver, cp.apiserverDone
		cp.apiserver = nil
		if err := cmd.Process.Kill(); err != nil {
			return err
		}
		select {
		case <-done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	// The first API server is envtest's process, which envtest waits for:
	// only its command line and its disappearance can be observed here.
	pid, args, err := cp.envtestAPIServer()
	if err != nil {
		return err
	}
	cp.apiserverArgs = args
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return err
	}
	for {
		if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); errors.Is(err, os.ErrNotExist) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kube-apiserver (pid %d) did not exit: %w", pid, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// StartAPIServer starts kube-apiserver again with the flags it had, after
// KillAPIServer, and returns once it is ready. Its log is
// kube-apiserver-restarted.log in Dir.
func (cp *ControlPlane) StartAPIServer(ctx context.Context) error {
	if cp.apiserverArgs == nil {
		return errors.New("kube-apiserver was never killed")
	}
	if cp.apiserver != nil {
		return errors.New("kube-apiserver is running")
	}
	log, err := os.OpenFile(filepath.Join(cp.Dir, "kube-apiserver-restarted.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(cp.env.ControlPlane.APIServer.Path, cp.apiserverArgs...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("starting kube-apiserver: %w", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); log.Close(); close(done) }()
	cp.apiserver, cp.apiserverDone = cmd, done

	cs, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		return err
	}
	return pollUntil(ctx, 2*time.Minute, func() (bool, error) {
		select {
		case <-done:
			cp.apiserver = nil
			return false, fmt.Errorf("kube-apiserver exited: %s (log in %s)", cmd.ProcessState, log.Name())
		default:
		}
		_, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil, nil
	})
}

// envtestAPIServer finds the kube-apiserver envtest started: the child of
// this process that runs its binary.
func (cp *ControlPlane) envtestAPIServer() (int, []string, error) {
	want, err := filepath.EvalSymlinks(cp.env.ControlPlane.APIServer.Path)
	if err != nil {
		return 0, nil, err
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, nil, err
	}
	self := strconv.Itoa(os.Getpid())
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		dir := filepath.Join("/proc", e.Name())
		stat, err := os.ReadFile(filepath.Join(dir, "stat"))
		if err != nil {
			continue
		}
		// The fields after the parenthesised command name: state, ppid, …
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) < 2 || fields[1] != self {
			continue
		}
		if exe, err := os.Readlink(filepath.Join(dir, "exe")); err != nil || exe != want {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join(dir, "cmdline"))
		if err != nil {
			return 0, nil, err
		}
		argv := strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00")
		return pid, argv[1:], nil
	}
	return 0, nil, errors.New("kube-apiserver is not running")
}
