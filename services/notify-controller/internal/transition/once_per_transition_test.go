package transition

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

var t0 = time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)

// state builds a Revision status: phase, attempt, and conditions given as
// "Type=Status@second".
func state(phase syncv1.RevisionPhase, attempt int32, conds ...string) syncv1.RevisionStatus {
	st := syncv1.RevisionStatus{Phase: phase, Attempt: attempt}
	for _, c := range conds {
		var typ, status string
		var at int
		if _, err := fmt.Sscanf(strings.NewReplacer("=", " ", "@", " ").Replace(c), "%s %s %d", &typ, &status, &at); err != nil {
			panic(c)
		}
		st.Conditions = append(st.Conditions, metav1.Condition{
			Type: typ, Status: metav1.ConditionStatus(status), Reason: "R", Message: typ + " message",
			LastTransitionTime: metav1.NewTime(t0.Add(time.Duration(at) * time.Second)),
		})
	}
	return st
}

func TestLedger_FiresOncePerTransition(t *testing.T) {
	awaiting := state(syncv1.PhaseAwaitingApproval, 0, "Planned=True@1", "AwaitingApproval=True@1")
	applying := state(syncv1.PhaseApplying, 1, "AwaitingApproval=False@5", "RolloutComplete=False@5")
	healthy := state(syncv1.PhaseHealthy, 1, "RolloutComplete=True@9", "Healthy=True@9")
	degraded := state(syncv1.PhaseHealthy, 1, "RolloutComplete=True@9", "Healthy=False@20")
	recovered := state(syncv1.PhaseHealthy, 1, "RolloutComplete=True@9", "Healthy=True@30")
	failed := state(syncv1.PhaseFailed, 1, "RolloutComplete=False@7")
	failedAgain := state(syncv1.PhaseFailed, 2, "RolloutComplete=False@40")
	staleAgain := state(syncv1.PhaseAwaitingApproval, 0, "AwaitingApproval=True@50")
	// The sync-controller leaves AwaitingApproval True once approved.
	applyingApproved := state(syncv1.PhaseApplying, 1, "AwaitingApproval=True@1", "RolloutComplete=False@5")
	healthyApproved := state(syncv1.PhaseHealthy, 1, "AwaitingApproval=True@1", "RolloutComplete=True@9", "Healthy=True@9")
	awaitingAgain := state(syncv1.PhaseAwaitingApproval, 1, "AwaitingApproval=True@1", "RolloutComplete=True@9")
	stale := state(syncv1.PhaseAwaitingApproval, 1, "AwaitingApproval=True@1", "RolloutComplete=True@9")
	stale.Conditions[0].Reason = syncv1.ReasonApprovalStale
	rolledBack := healthy
	rolledBack.Approval = &syncv1.ApprovalRecord{Revision: "api-1", By: "carol", Rollback: true}
	diagnosed := failed
	diagnosed.Diagnosis = &syncv1.Diagnosis{Summary: "Deployment api: image pull failed",
		Causes: []syncv1.Cause{{Chain: []syncv1.CauseLink{{ObjectRef: syncv1.ObjectRef{Kind: "Pod", Name: "api-x"}, Message: "ErrImagePull"}}}}}
	rediagnosed := failed
	rediagnosed.Diagnosis = &syncv1.Diagnosis{
		Causes: []syncv1.Cause{{Chain: []syncv1.CauseLink{{ObjectRef: syncv1.ObjectRef{Kind: "Pod", Name: "api-y"}, Message: "OOMKilled"}}}}}

	for _, tc := range []struct {
		name  string
		steps []syncv1.RevisionStatus
		// restart replaces the process before these steps: its memory is
		// lost, the recorded status stays.
		restart map[int]bool
		// refuse has the sink refuse every notification at these steps.
		refuse map[int]bool
		want   []string
	}{
		{name: "a manual rollout, each status read many times",
			steps: []syncv1.RevisionStatus{{}, awaiting, awaiting, awaiting, applying, applying, healthy, healthy, healthy},
			want:  []string{"AwaitingApproval", "Applying", "Healthy"}},
		{name: "an approved condition that stays True is not a new wait; a later wait and a stale approval are",
			steps: []syncv1.RevisionStatus{awaiting, applyingApproved, applyingApproved, healthyApproved, awaitingAgain, awaitingAgain, stale},
			want:  []string{"AwaitingApproval", "Applying", "Healthy", "AwaitingApproval", "AwaitingApproval"}},
		{name: "recovered health fires Healthy again, degraded alone does not",
			steps: []syncv1.RevisionStatus{healthy, degraded, degraded, recovered, recovered},
			want:  []string{"Healthy", "Healthy"}},
		{name: "a retried attempt that fails again fires Failed again",
			steps: []syncv1.RevisionStatus{failed, failed, failedAgain, failedAgain},
			want:  []string{"Failed", "Failed"}},
		{name: "an approval that went stale asks again",
			steps: []syncv1.RevisionStatus{awaiting, applying, staleAgain, staleAgain},
			want:  []string{"AwaitingApproval", "Applying", "AwaitingApproval"}},
		{name: "a completed rollback is Healthy and RolledBack",
			steps: []syncv1.RevisionStatus{rolledBack, rolledBack},
			want:  []string{"Healthy", "RolledBack"}},
		{name: "a diagnosis fires when its causes change, not when the summary is read again",
			steps: []syncv1.RevisionStatus{diagnosed, diagnosed, rediagnosed},
			want:  []string{"Failed", "Diagnosed", "Diagnosed"}},
		{name: "what the record holds is not sent again by a new process",
			steps:   []syncv1.RevisionStatus{awaiting, awaiting, applying, healthy, healthy},
			restart: map[int]bool{1: true, 4: true},
			want:    []string{"AwaitingApproval", "Applying", "Healthy"}},
		{name: "what a new process finds unrecorded is sent, once",
			steps:   []syncv1.RevisionStatus{{}, awaiting, awaiting, applying, healthy},
			restart: map[int]bool{1: true, 3: true, 4: true},
			want:    []string{"AwaitingApproval", "Applying", "Healthy"}},
		{name: "a refused notification is not sent again by the same process, but by the next",
			steps:   []syncv1.RevisionStatus{awaiting, awaiting, awaiting, awaiting},
			refuse:  map[int]bool{0: true},
			restart: map[int]bool{2: true},
			want:    []string{"AwaitingApproval", "AwaitingApproval"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := NewLedger()
			app := types.NamespacedName{Namespace: "payments", Name: "api"}
			var status []syncv1.DeliveredNotification
			var got []string
			for i, st := range tc.steps {
				if tc.restart[i] {
					l = NewLedger()
				}
				rev := []syncv1.Revision{{ObjectMeta: metav1.ObjectMeta{Name: "api-1", UID: "uid-1"}, Status: st}}
				want := deliveries("audit", Observe(rev))
				for _, d := range l.Due(app, status, want) {
					got = append(got, string(d.Occurrence.Event))
					if !tc.refuse[i] {
						l.Delivered(app, d)
					}
				}
				if rec, n := l.Record(app, status, want); n > 0 {
					l.Recorded(app, rec, n)
					status = rec
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("fired %v, want %v", got, tc.want)
			}
		})
	}
}

// deliveries are occ for one sink, as the controller wants them delivered.
func deliveries(sink string, occ []Occurrence) []Delivery {
	var out []Delivery
	for _, o := range occ {
		out = append(out, Delivery{Sink: sink, ID: o.ID("app-uid"), Occurrence: o})
	}
	return out
}

func TestLedger_ARecreatedRevisionStartsAfresh(t *testing.T) {
	l := NewLedger()
	app := types.NamespacedName{Namespace: "payments", Name: "api"}
	status := state(syncv1.PhaseAwaitingApproval, 0, "AwaitingApproval=True@1")
	for _, tc := range []struct {
		uid  types.UID
		want int
	}{{"uid-1", 1}, {"uid-1", 0}, {"uid-2", 1}} {
		rev := []syncv1.Revision{{ObjectMeta: metav1.ObjectMeta{Name: "api-1", UID: tc.uid}, Status: status}}
		if got := len(l.Due(app, nil, deliveries("audit", Observe(rev)))); got != tc.want {
			t.Errorf("Revision UID %s: %d due, want %d", tc.uid, got, tc.want)
		}
	}
}
