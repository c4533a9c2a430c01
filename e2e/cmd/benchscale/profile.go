package main

import (
	"context"
	"fmt"
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

// profiler fetches profiles of one process: a CPU profile for the given
// seconds, and, for a service, its heap profile (nil for kube-apiserver,
// whose memory is not ours to bound).
type profiler struct {
	cpu  func(ctx context.Context, seconds int) ([]byte, error)
	heap func(ctx context.Context) ([]byte, error)
}

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
		base := "http://" + strings.TrimPrefix(flag[0], "--pprof-bind-address=") + "/debug/pprof/"
		return profiler{
			cpu: func(ctx context.Context, seconds int) ([]byte, error) {
				return fetch(ctx, fmt.Sprintf("%sprofile?seconds=%d", base, seconds))
			},
			heap: func(ctx context.Context) ([]byte, error) { return fetch(ctx, base+"heap") },
		}
	}
	return map[string]profiler{
		"kube-apiserver": {cpu: func(ctx context.Context, seconds int) ([]byte, error) {
			return kube.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/profile").
				Param("seconds", fmt.Sprint(seconds)).Timeout(time.Duration(seconds+30) * time.Second).DoRaw(ctx)
		}},
		"source-controller": service(sourceFlag),
		"sync-controller":   service(syncFlag),
	}
}

// profile starts profiling every process during the phase called name and
// returns a function that waits for the profiles and writes them to
// profileDir: a CPU profile from profileStart for profileLength, then the
// services' heap profiles. A phase shorter than the profile's start is not
// profiled; one that failed (abort) stops its profiles at once.
func (s *services) profile(ctx context.Context, name string) func(abort bool) error {
	if len(s.profilers) == 0 {
		return func(bool) error { return nil }
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
			err := write(slug+"-"+proc+".pprof", func() ([]byte, error) { return p.cpu(ctx, int(profileLength/time.Second)) })
			if err == nil && p.heap != nil {
				err = write(slug+"-"+proc+".heap.pprof", func() ([]byte, error) { return p.heap(ctx) })
			}
			if err != nil && ctx.Err() == nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("profile of %s during %q: %w", proc, name, err))
				mu.Unlock()
			}
		})
	}
	return func(abort bool) error {
		close(done)
		if abort {
			cancel()
		}
		wg.Wait()
		cancel()
		if len(errs) > 0 {
			return errs[0]
		}
		return nil
	}
}

// write writes the profile get returns to the file called name in
// profileDir.
func write(name string, get func() ([]byte, error)) error {
	body, err := get()
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(profileDir, name), body, 0o644)
}
