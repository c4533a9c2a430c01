package ssa_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/ssa"
)

// BenchmarkStatusWrite prices one status write, Server-Side Apply against
// JSON merge patch, on the suite's kube-apiserver (DESIGN.md section 1: a
// status write may be either, chosen per object by what measures cheaper).
// Each op is one write of the status a rollout of 4 objects records at its
// next step: the Revision's phase, a wave's state, health, a condition and,
// every third step, a new attempt; the Application's phase, sync and health,
// a condition, its history's newest entry and, every third step, a new
// history entry and deployed revision. The statuses are written one after
// the other with one client; the first, which creates the status, is not
// timed.
//
// Metrics, besides ns/op: apiserver-cpu-ms/op and etcd-cpu-ms/op, the CPU
// time (user and system, from /proc/<pid>/stat) kube-apiserver and etcd
// spent during the timed writes, per write, their idle work included;
// apiserver-idle-cpu-ms/op and etcd-idle-cpu-ms/op, that idle work, from
// their CPU time per second measured just before the timed writes; and
// request-B/op, the request body sent.
func BenchmarkStatusWrite(b *testing.B) {
	kinds := []struct {
		name   string
		obj    func(tb testing.TB, ns string) client.Object
		status func(step int) any
	}{
		{"revision", func(tb testing.TB, ns string) client.Object { return newRevision(tb, ns, "web-0123456789") }, revisionStatus},
		{"application", func(tb testing.TB, ns string) client.Object { return newApplication(tb, ns, "web") }, applicationStatus},
	}
	writes := []struct {
		name  string
		write func(ctx context.Context, c client.Client, obj client.Object, written, status any) error
	}{
		{"ssa", func(ctx context.Context, c client.Client, obj client.Object, _, status any) error {
			return ssa.ApplyStatus(ctx, c, obj, syncv1.FieldManagerSync, status)
		}},
		{"merge-patch", func(ctx context.Context, c client.Client, obj client.Object, written, status any) error {
			return ssa.MergeStatus(ctx, c, obj, syncv1.FieldManagerSync, written, status)
		}},
	}
	for _, k := range kinds {
		for _, w := range writes {
			b.Run(k.name+"/"+w.name, func(b *testing.B) {
				c, sent := countingClient(b)
				obj := k.obj(b, newNamespace(b))
				written := k.status(0)
				must(b, w.write(b.Context(), c, obj, nil, written))
				idle := idleCPU(b)
				sentBefore := sent.bytes.Load()
				before := cpuOf(b)
				b.ResetTimer()
				for step := 1; step <= b.N; step++ {
					status := k.status(step)
					if err := w.write(b.Context(), c, obj, written, status); err != nil {
						b.Fatalf("step %d: %v", step, err)
					}
					written = status
				}
				b.StopTimer()
				spent, n := cpuOf(b).minus(before), float64(b.N)
				idleSpent := idle.times(b.Elapsed())
				b.ReportMetric(spent.apiserver/n, "apiserver-cpu-ms/op")
				b.ReportMetric(idleSpent.apiserver/n, "apiserver-idle-cpu-ms/op")
				b.ReportMetric(spent.etcd/n, "etcd-cpu-ms/op")
				b.ReportMetric(idleSpent.etcd/n, "etcd-idle-cpu-ms/op")
				b.ReportMetric(float64(sent.bytes.Load()-sentBefore)/n, "request-B/op")
			})
		}
	}
}

// cpu is CPU time of kube-apiserver and etcd, in milliseconds, or per
// second of wall time.
type cpu struct{ apiserver, etcd float64 }

// cpuOf reads the CPU time kube-apiserver and etcd have used; USER_HZ ticks
// are 10 ms.
func cpuOf(tb testing.TB) cpu {
	return cpu{float64(cpuTicks(tb, "kube-apiserver")) * 10, float64(cpuTicks(tb, "etcd")) * 10}
}

func (c cpu) minus(o cpu) cpu { return cpu{c.apiserver - o.apiserver, c.etcd - o.etcd} }

func (c cpu) times(d time.Duration) cpu {
	return cpu{c.apiserver * d.Seconds(), c.etcd * d.Seconds()}
}

// idleCPU is the CPU time per second kube-apiserver and etcd use while no
// one writes, measured over 2 s: their own work (leases, compaction,
// controllers), part of every figure of the timed writes.
func idleCPU(tb testing.TB) cpu {
	const window = 2 * time.Second
	before := cpuOf(tb)
	time.Sleep(window)
	spent := cpuOf(tb).minus(before)
	return cpu{spent.apiserver / window.Seconds(), spent.etcd / window.Seconds()}
}

// benchStart is the benchmark's clock: step n happens n seconds after it.
var benchStart = time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)

func at(step int) metav1.Time {
	return metav1.NewTime(benchStart.Add(time.Duration(step) * time.Second))
}

// hexOf is 64 hex digits derived from s, for digests and commits.
func hexOf(s string) string { return fmt.Sprintf("%x", sha256.Sum256([]byte(s))) }

// rolloutObjects are the 4 objects of the rollout, in waves 0 and 1.
var rolloutObjects = []syncv1.ObjectRef{
	{Version: "v1", Kind: "ServiceAccount", Namespace: "web", Name: "web"},
	{Version: "v1", Kind: "ConfigMap", Namespace: "web", Name: "web-settings"},
	{Version: "v1", Kind: "Service", Namespace: "web", Name: "web"},
	{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "web", Name: "web"},
}

// revisionStatus is the Revision's status at a step of its rollouts: each
// attempt takes 3 steps, wave 0 applying, wave 1 applying, Healthy.
func revisionStatus(step int) any {
	attempt, s := int32(step/3+1), step%3
	entries := make([]syncv1.PlanEntry, len(rolloutObjects))
	inventory := make([]string, len(rolloutObjects))
	for i, o := range rolloutObjects {
		entries[i] = syncv1.PlanEntry{ObjectRef: o, Action: syncv1.ActionUnchanged, Wave: int32(i / 2)}
		inventory[i] = strings.Join([]string{o.Namespace, o.Name, o.Group, o.Kind, o.Version}, "_")
	}
	entries[1].Action = syncv1.ActionUpdate
	entries[1].Diff = "--- live\n+++ desired\n@@ -3,4 +3,4 @@\n data:\n-  LOG_LEVEL: info\n+  LOG_LEVEL: debug\n   REGION: eu-west-1\n   TIMEOUT: 30s\n"
	entries[3].Action = syncv1.ActionUpdate
	entries[3].Diff = "--- live\n+++ desired\n@@ -21,7 +21,7 @@\n       containers:\n       - name: web\n-        image: ghcr.io/kuvryn/web:1.4.2@sha256:" + hexOf("1.4.2") +
		"\n+        image: ghcr.io/kuvryn/web:1.4.3@sha256:" + hexOf("1.4.3") + "\n         ports:\n         - containerPort: 8080\n"
	planned := at(0)
	st := &syncv1.RevisionStatus{
		ObservedGeneration: 1,
		Phase:              syncv1.PhaseApplying,
		Plan: &syncv1.Plan{
			Digest: "sha256:" + hexOf("plan"), PlannedAt: planned,
			Summary: syncv1.PlanSummary{Update: 2, Unchanged: 2}, Entries: entries,
		},
		Approval: &syncv1.ApprovalRecord{Revision: "web-0123456789", By: "system:serviceaccount:kuvryn-system:sync-controller",
			At: planned, Digest: "sha256:" + hexOf("plan")},
		Waves: []syncv1.WaveStatus{
			{Wave: 0, State: syncv1.WaveApplying, Objects: 2}, {Wave: 1, State: syncv1.WavePending, Objects: 2},
		},
		Inventory: &syncv1.Inventory{Entries: inventory},
		Health:    syncv1.HealthProgressing,
		Attempt:   attempt,
	}
	complete := metav1.Condition{Type: syncv1.ConditionRolloutComplete, Status: metav1.ConditionFalse,
		Reason: "Applying", Message: fmt.Sprintf("attempt %d: applying wave %d of 2", attempt, s), LastTransitionTime: at(step - s), ObservedGeneration: 1}
	healthy := metav1.Condition{Type: syncv1.ConditionHealthy, Status: metav1.ConditionUnknown,
		Reason: "Progressing", Message: "waiting for wave 0", LastTransitionTime: at(step - s), ObservedGeneration: 1}
	switch s {
	case 1:
		st.Waves[0].State, st.Waves[1].State = syncv1.WaveHealthy, syncv1.WaveApplying
		healthy.Message = "waiting for wave 1"
	case 2:
		st.Phase, st.Health = syncv1.PhaseHealthy, syncv1.HealthHealthy
		st.Waves[0].State, st.Waves[1].State = syncv1.WaveHealthy, syncv1.WaveHealthy
		complete.Status, complete.Reason, complete.Message, complete.LastTransitionTime = metav1.ConditionTrue, "Succeeded", "4 objects applied", at(step)
		healthy.Status, healthy.Reason, healthy.Message, healthy.LastTransitionTime = metav1.ConditionTrue, "Healthy", "4 objects healthy", at(step)
	}
	st.Conditions = []metav1.Condition{
		{Type: syncv1.ConditionPlanned, Status: metav1.ConditionTrue, Reason: "Planned", Message: "2 to update, 2 unchanged", LastTransitionTime: planned, ObservedGeneration: 1},
		{Type: syncv1.ConditionApproved, Status: metav1.ConditionTrue, Reason: "Automatic", Message: "automatic sync", LastTransitionTime: planned, ObservedGeneration: 1},
		complete, healthy,
	}
	return st
}

// applicationStatus is the Application's status at a step: each attempt,
// of a new Revision, takes 3 steps as in revisionStatus; history keeps 10
// attempts, the newest first.
func applicationStatus(step int) any {
	attempt, s := step/3, step%3
	revision := func(a int) string { return "web-" + hexOf(fmt.Sprint("revision", a))[:10] }
	history := make([]syncv1.HistoryEntry, 0, 10)
	for a := attempt; a >= 0 && len(history) < 10; a-- {
		started, finished := at(3*a), at(3*a+2)
		h := syncv1.HistoryEntry{
			Revision: revision(a), SourceCommit: hexOf(fmt.Sprint("commit", a))[:40],
			PlanDigest: "sha256:" + hexOf(fmt.Sprint("plan", a)), Result: syncv1.PhaseHealthy,
			Reason: "Succeeded", StartedAt: &started, FinishedAt: &finished,
		}
		if a == attempt && s < 2 {
			h.Result, h.Reason, h.FinishedAt = syncv1.PhaseApplying, "", nil
		}
		history = append(history, h)
	}
	st := &syncv1.ApplicationStatus{
		ObservedGeneration: 1,
		Sync:               syncv1.SyncStateOutOfSync, Health: syncv1.HealthProgressing, Phase: syncv1.PhaseApplying,
		DeployedRevision: revision(attempt - 1), LastKnownGoodRevision: revision(attempt - 1),
		History: history,
	}
	ready := metav1.Condition{Type: syncv1.ConditionReady, Status: metav1.ConditionFalse, Reason: "Progressing",
		Message: fmt.Sprintf("rolling out %s: wave %d of 2", revision(attempt), s), LastTransitionTime: at(step - s), ObservedGeneration: 1}
	synced := metav1.Condition{Type: syncv1.ConditionSynced, Status: metav1.ConditionFalse, Reason: "OutOfSync",
		Message: "2 objects differ from " + revision(attempt), LastTransitionTime: at(step - s), ObservedGeneration: 1}
	healthy := metav1.Condition{Type: syncv1.ConditionHealthy, Status: metav1.ConditionUnknown, Reason: "Progressing",
		Message: "rolling out", LastTransitionTime: at(step - s), ObservedGeneration: 1}
	if s == 2 {
		st.Sync, st.Health, st.Phase = syncv1.SyncStateSynced, syncv1.HealthHealthy, syncv1.PhaseHealthy
		st.DeployedRevision, st.LastKnownGoodRevision = revision(attempt), revision(attempt)
		ready.Status, ready.Reason, ready.Message, ready.LastTransitionTime = metav1.ConditionTrue, "Succeeded", revision(attempt)+" is deployed and healthy", at(step)
		synced.Status, synced.Reason, synced.Message, synced.LastTransitionTime = metav1.ConditionTrue, "Synced", "live state matches "+revision(attempt), at(step)
		healthy.Status, healthy.Reason, healthy.Message, healthy.LastTransitionTime = metav1.ConditionTrue, "Healthy", "4 objects healthy", at(step)
	}
	st.Conditions = []metav1.Condition{ready, synced, healthy}
	return st
}

// cpuTicks is the CPU time, user and system, that the running process of
// binary (kube-apiserver or etcd) started by envtest has used, in the
// kernel's USER_HZ ticks (1/100 s on Linux).
func cpuTicks(tb testing.TB, binary string) int64 {
	tb.Helper()
	entries, err := os.ReadDir("/proc")
	must(tb, err)
	self := strconv.Itoa(os.Getpid())
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err != nil || filepath.Base(exe) != binary {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// After the parenthesised command name: state (3), ppid (4), ...,
		// utime (14), stime (15), numbered as in proc(5).
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) < 13 || f[1] != self {
			continue
		}
		utime, err1 := strconv.ParseInt(f[11], 10, 64)
		stime, err2 := strconv.ParseInt(f[12], 10, 64)
		if err1 != nil || err2 != nil {
			tb.Fatalf("reading CPU time of %s from /proc/%s/stat: %q", binary, e.Name(), stat)
		}
		return utime + stime
	}
	tb.Fatalf("no %s process started by this test process", binary)
	return 0
}
