package revision

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

func TestRetry_DecidesWhenAFailedAttemptIsTriedAgain(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	failed := func(rev string, ago time.Duration, reason string) syncv1.HistoryEntry {
		return syncv1.HistoryEntry{Revision: rev, Result: syncv1.PhaseFailed, Reason: reason,
			FinishedAt: &metav1.Time{Time: now.Add(-ago)}}
	}
	approvedAt := now.Add(-time.Second).Format(time.RFC3339)
	freshApproval := map[string]string{
		syncv1.ApprovedRevisionAnnotation: "shop-1", syncv1.ApprovedDigestAnnotation: "sha256:old",
		syncv1.ApprovedByAnnotation: "alice", syncv1.ApprovedAtAnnotation: approvedAt,
	}
	usedApproval := &syncv1.ApprovalRecord{Revision: "shop-1", By: "alice", Digest: "sha256:old",
		At: metav1.NewTime(now.Add(-time.Second).Truncate(time.Second))}

	for _, tc := range []struct {
		name        string
		automatic   bool
		interval    time.Duration
		phase       syncv1.RevisionPhase
		history     []syncv1.HistoryEntry
		annotations map[string]string
		used        *syncv1.ApprovalRecord
		retried     bool
		wait        time.Duration
	}{
		{name: "automatic, backoff not yet passed", automatic: true, interval: 30 * time.Second, phase: syncv1.PhaseFailed,
			history: []syncv1.HistoryEntry{failed("shop-1", 10*time.Second, syncv1.ReasonHookFailed)}, wait: 20 * time.Second},
		{name: "automatic, backoff passed", automatic: true, interval: 30 * time.Second, phase: syncv1.PhaseFailed,
			history: []syncv1.HistoryEntry{failed("shop-1", 31*time.Second, syncv1.ReasonHookFailed)}, retried: true},
		{name: "automatic, backoff doubles per failure in a row", automatic: true, interval: 30 * time.Second, phase: syncv1.PhaseFailed,
			history: []syncv1.HistoryEntry{
				failed("shop-1", 40*time.Second, syncv1.ReasonApplyConflict),
				failed("shop-1", 5*time.Minute, syncv1.ReasonApplyConflict),
				{Revision: "shop-0", Result: syncv1.PhaseFailed},
			}, wait: 20 * time.Second},
		{name: "automatic, backoff capped", automatic: true, interval: 8 * time.Minute, phase: syncv1.PhaseFailed,
			history: []syncv1.HistoryEntry{
				failed("shop-1", 9*time.Minute, syncv1.ReasonHealthFailure),
				failed("shop-1", 20*time.Minute, syncv1.ReasonHealthFailure),
			}, wait: time.Minute},
		{name: "automatic, retries disabled", automatic: true, interval: 0, phase: syncv1.PhaseFailed,
			history: []syncv1.HistoryEntry{failed("shop-1", time.Hour, syncv1.ReasonHookFailed)}},
		{name: "a desired state that failed validation is never retried", automatic: true, interval: time.Second, phase: syncv1.PhaseFailed,
			history: []syncv1.HistoryEntry{failed("shop-1", time.Hour, syncv1.ReasonValidationFailure)}},
		{name: "a Healthy Revision is not retried", automatic: true, interval: time.Second, phase: syncv1.PhaseHealthy,
			history: []syncv1.HistoryEntry{{Revision: "shop-1", Result: syncv1.PhaseHealthy}}},
		{name: "manual, without a fresh approval", interval: time.Second, phase: syncv1.PhaseFailed,
			history: []syncv1.HistoryEntry{failed("shop-1", time.Hour, syncv1.ReasonHookFailed)}},
		{name: "manual, the approval the failed attempt used", interval: time.Second, phase: syncv1.PhaseFailed,
			history:     []syncv1.HistoryEntry{failed("shop-1", time.Hour, syncv1.ReasonHookFailed)},
			annotations: freshApproval, used: usedApproval},
		{name: "manual, a fresh approval", interval: time.Second, phase: syncv1.PhaseFailed,
			history:     []syncv1.HistoryEntry{failed("shop-1", time.Second, syncv1.ReasonHookFailed)},
			annotations: freshApproval, retried: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app := &syncv1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "shop", Annotations: tc.annotations}}
			app.Spec.Sync.Automatic = tc.automatic
			app.Status.History = tc.history
			rev := &syncv1.Revision{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "shop-1"}}
			rev.Status.Phase = tc.phase
			rev.Status.Attempt = 1
			rev.Status.Plan = &syncv1.Plan{Digest: "sha256:old"}
			rev.Status.Approval = tc.used
			ro := newRollout(app)
			ro.Now = metav1.NewTime(now)
			ro.setRevision(rev)
			r := &Reconciler{Options: Options{RetryInterval: tc.interval}}

			s, err := r.retry(t.Context(), ro)
			if err != nil {
				t.Fatal(err)
			}
			if got := rev.Status.Phase == syncv1.PhasePlanned; got != tc.retried {
				t.Fatalf("retried = %v (phase %s), want %v", got, rev.Status.Phase, tc.retried)
			}
			if tc.retried {
				if rev.Status.Plan != nil || s.next || s.requeueAfter != shortPoll {
					t.Errorf("plan %v, step %+v: want the plan dropped for a fresh one and a quick requeue", rev.Status.Plan, s)
				}
				if len(ro.events) != 1 || !contains(ro.events[0].message, "retrying Revision shop-1", tc.history[0].Reason) {
					t.Errorf("events %+v, want one saying the Revision is retried and why", ro.events)
				}
				return
			}
			if tc.wait > 0 && (s.next || s.requeueAfter != tc.wait) {
				t.Errorf("step %+v, want a requeue after %s", s, tc.wait)
			}
			if tc.wait == 0 && !s.next {
				t.Errorf("step %+v, want the reconcile to go on", s)
			}
			if len(ro.events) != 0 {
				t.Errorf("events %+v, want none", ro.events)
			}
		})
	}
}

func TestRetry_AutomaticApplicationResumesAfterAFailureWithoutRerunningSucceededHooks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	rec := watchKinds(t, e.ns, jobGVK)
	o := defaultOptions()
	o.RetryInterval = time.Second
	e.startController(o)
	e.createApplication("shop", nil)
	late := object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: late\n  annotations:\n    sync.kuvryn.io/sync-wave: \"1\"\ndata:\n  mode: fast\n")
	name := e.publish("shop", object(t, migrateJob), e.gatedDeployment("web"), late)
	e.waitForRevision(name, "pre-sync hook done and wave 0 waiting", func(rev *syncv1.Revision) bool {
		return len(rev.Status.Waves) == 2 && rev.Status.Waves[0].State == syncv1.WaveApplying
	})

	// Another team takes the ConfigMap of wave 1: attempt 1 fails there.
	other := object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: late\ndata:\n  mode: slow\n")
	other.SetNamespace(e.ns)
	must(t, admin.Apply(ctx, client.ApplyConfigurationFromUnstructured(other), client.FieldOwner("other-team")))
	e.openGate()
	failedRev := e.waitForRevision(name, "attempt 1 Failed", func(rev *syncv1.Revision) bool {
		return rev.Status.Attempt == 1 && rev.Status.Phase == syncv1.PhaseFailed
	})
	migrateUID := hookState(failedRev, "migrate").UID

	// The retry plans again and finds the conflict still there; once the
	// other team gives the ConfigMap up, the retry rolls out.
	eventually(t, "an Event saying the Revision is retried", func() bool {
		for _, ev := range e.events("shop", syncv1.ReasonProgressing) {
			if contains(ev.Note, "retrying Revision "+name, "attempt 1 failed with "+syncv1.ReasonApplyConflict) {
				return true
			}
		}
		return false
	}, nil)
	must(t, admin.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "late"}}))
	rev := e.waitForPhase(name, syncv1.PhaseHealthy)
	if rev.Status.Attempt != 2 {
		t.Errorf("attempt %d, want the retry to be attempt 2", rev.Status.Attempt)
	}

	if got := hookState(rev, "migrate"); got.State != syncv1.HookSucceeded || got.UID != migrateUID {
		t.Errorf("hook migrate = %+v, want Succeeded with the UID %s of attempt 1", got, migrateUID)
	}
	if n := rec.creations("Job", "migrate"); n != 1 {
		t.Errorf("pre-sync hook Job migrate was created %d times, want once across the attempts\nobserved:\n%s", n, rec)
	}
	h := e.application("shop").Status.History
	if len(h) < 2 || h[0].Result != syncv1.PhaseHealthy || h[len(h)-1].Result != syncv1.PhaseFailed || h[len(h)-1].Reason != syncv1.ReasonApplyConflict {
		t.Errorf("history = %+v, want the newest attempt Healthy and the oldest Failed with ApplyConflict", h)
	}
}
