package controller_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"

	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/cachepruner"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/chart"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/gitrepo"
)

// The guide: the source cache is pruned every hour; the first prune comes
// a minute after start-up. The pruner's waits are handed to the test, which
// ends each one itself, so the schedule runs without waiting an hour.
func TestCachePrune_OneMinuteAfterStartThenHourly(t *testing.T) {
	type wait struct {
		d    time.Duration
		fire chan time.Time
	}
	waits := make(chan wait)
	var mu sync.Mutex
	prunes := 0
	dir := t.TempDir()
	p := &cachepruner.Pruner{
		Client: k8s,
		Git:    &gitrepo.Cache{Dir: filepath.Join(dir, "git")},
		Charts: &chart.Puller{Dir: filepath.Join(dir, "charts")},
		Log: funcr.New(func(_, args string) {
			if strings.Contains(args, `"msg"="Pruned Helm chart cache"`) {
				mu.Lock()
				prunes++
				mu.Unlock()
			}
		}, funcr.Options{}),
		After: func(d time.Duration) <-chan time.Time {
			w := wait{d: d, fire: make(chan time.Time, 1)}
			waits <- w
			return w.fire
		},
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- p.Start(ctx) }()
	defer func() {
		cancel()
		// The pruner may be handing over its next wait as it stops.
		select {
		case <-waits:
		case <-done:
			return
		}
		<-done
	}()

	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return prunes
	}
	next := func() wait {
		t.Helper()
		select {
		case w := <-waits:
			return w
		case err := <-done:
			t.Fatalf("the pruner stopped: %v", err)
		case <-time.After(time.Minute):
			t.Fatal("the pruner never waited for its next prune")
		}
		return wait{}
	}
	for i, want := range []time.Duration{time.Minute, time.Hour, time.Hour} {
		w := next()
		if w.d != want {
			t.Fatalf("wait %d before a prune is %s, want %s", i+1, w.d, want)
		}
		if n := count(); n != i {
			t.Fatalf("%d prunes before wait %d ended, want %d", n, i+1, i)
		}
		w.fire <- time.Now()
	}
	// The fourth wait begins only once the third prune has finished.
	if w := next(); w.d != time.Hour {
		t.Fatalf("wait 4 before a prune is %s, want 1h", w.d)
	}
	if n := count(); n != 3 {
		t.Errorf("%d prunes after three waits, want 3", n)
	}
}
