package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat on
// Linux.
const clockTicks = 100

// vmHWM is the peak resident set size of process pid, in KiB.
func vmHWM(pid int) (int64, error) {
	return procStatusKiB(fmt.Sprintf("/proc/%d/status", pid), "VmHWM:")
}

// memTotal describes the machine's memory.
func memTotal() string {
	kib, err := procStatusKiB("/proc/meminfo", "MemTotal:")
	if err != nil {
		return "memory unknown"
	}
	return fmt.Sprintf("%.1f GiB memory", float64(kib)/(1<<20))
}

func procStatusKiB(path, field string) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				break
			}
			return strconv.ParseInt(f[0], 10, 64)
		}
	}
	return 0, fmt.Errorf("%s: no %s", path, field)
}

// cpuTime is the user and system CPU time process pid used so far.
func cpuTime(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces: count from after it.
	s := string(data)
	f := strings.Fields(s[strings.LastIndex(s, ")")+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	var ticks int64
	for _, v := range f[11:13] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return "an unnamed machine"
	}
	return h
}

// loadAverage is the machine's 1, 5 and 15 minute load averages.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// controlPlaneCPU is the CPU time used so far by each control-plane process
// this process started (etcd, kube-apiserver, kube-controller-manager, ...),
// apiServer is kube-apiserver's name in controlPlaneCPU.
const apiServer = "kube-apiserver"

// by command name.
func controlPlaneCPU() (map[string]time.Duration, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	self := os.Getpid()
	out := map[string]time.Duration{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		s := string(data)
		open, end := strings.IndexByte(s, '('), strings.LastIndex(s, ")")
		if open < 0 || end < open {
			continue
		}
		f := strings.Fields(s[end+1:])
		if len(f) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(f[1]); err != nil || ppid != self {
			continue
		}
		cpu, err := cpuTime(pid)
		if err != nil {
			continue
		}
		out[s[open+1:end]] += cpu
	}
	return out, nil
}

// rssInterval is how often rssPeaks samples.
const rssInterval = 250 * time.Millisecond

// rssPeaks follows the anonymous and the file-backed resident memory of a
// process (RssAnon and RssFile in /proc/<pid>/status): VmHWM is only the
// peak of their sum, and the file-backed part is the binary's own pages,
// which no change to what the process holds can shrink.
type rssPeaks struct {
	mu         sync.Mutex
	anon, file int64 // KiB
	// anonDuring is what was going on when anon peaked.
	anonDuring string
}

// follow samples pid until ctx ends; during says what is going on.
func (r *rssPeaks) follow(ctx context.Context, pid int, during func() string) {
	t := time.NewTicker(rssInterval)
	defer t.Stop()
	path := fmt.Sprintf("/proc/%d/status", pid)
	for {
		anon, errA := procStatusKiB(path, "RssAnon:")
		file, errF := procStatusKiB(path, "RssFile:")
		if errA == nil && errF == nil {
			r.mu.Lock()
			if anon > r.anon {
				r.anon, r.anonDuring = anon, during()
			}
			r.file = max(r.file, file)
			r.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (r *rssPeaks) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return fmt.Sprintf("anonymous %d MiB (%s), file-backed %d MiB", r.anon>>10, r.anonDuring, r.file>>10)
}
