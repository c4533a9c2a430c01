package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
)

// A phase is profiled from profileStart into it for profileLength: past the
// first burst of creates, while every kind of request is in flight.
const (
	profileStart  = 10 * time.Second
	profileLength = 30 * time.Second
)

// profiler fetches a CPU profile of one process for the given seconds.
type profiler func(ctx context.Context, seconds int) ([]byte, error)

// pprofFlag picks a loopback address for a service's profiler.
func pprofFlag(addr func() (string, error)) ([]string, error) {
	a, err := addr()
	if err != nil {
		return nil, err
	}
	return []string{"--pprof-bind-address=" + a}, nil
}

// profilers are kube-apiserver's profiler, reached with the harness's
// credentials, and each service's, reached on the address its flag gave.
func profilers(kube kubernetes.Interface, sourceFlag, syncFlag []string) map[string]profiler {
	service := func(flag []string) profiler {
		addr := strings.TrimPrefix(flag[0], "--pprof-bind-address=")
		return func(ctx context.Context, seconds int) ([]byte, error) {
			url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, seconds)
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				return nil, err
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return nil, err
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return nil, fmt.Errorf("%s: %s", url, resp.Status)
			}
			return io.ReadAll(resp.Body)
		}
	}
	return map[string]profiler{
		"kube-apiserver": func(ctx context.Context, seconds int) ([]byte, error) {
			return kube.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/profile").
				Param("seconds", fmt.Sprint(seconds)).Timeout(time.Duration(seconds+30) * time.Second).DoRaw(ctx)
		},
		"source-controller": service(sourceFlag),
		"sync-controller":   service(syncFlag),
	}
}

// profile starts profiling every process during the phase called name and
// returns a function that waits for the profiles and writes them to
// profileDir. A phase shorter than the profile's start is not profiled.
func (s *services) profile(ctx context.Context, name string) func() error {
	if len(s.profilers) == 0 {
		return func() error { return nil }
	}
	ctx, cancel := context.WithCancel(ctx)
	slug := strings.Join(strings.Fields(name)[:2], "-")
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	done := make(chan struct{})
	for proc, p := range s.profilers {
		wg.Go(func() {
			select {
			case <-time.After(profileStart):
			case <-done:
				return
			}
			body, err := p(ctx, int(profileLength/time.Second))
			if err == nil {
				err = os.WriteFile(filepath.Join(profileDir, slug+"-"+proc+".pprof"), body, 0o644)
			}
			if err != nil && ctx.Err() == nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("profile of %s during %q: %w", proc, name, err))
				mu.Unlock()
			}
		})
	}
	return func() error {
		close(done)
		wg.Wait()
		cancel()
		if len(errs) > 0 {
			return errs[0]
		}
		return nil
	}
}
