package revision

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// Whether the Application shows the Revision's latest attempt decides
// whether a restarted controller brings it up to the Revision's record.
func TestCatchUp_ApplicationShowsTheRevisionsAttempt(t *testing.T) {
	started := metav1.NewTime(time.Date(2026, 12, 7, 21, 0, 0, 0, time.UTC))
	later := metav1.NewTime(started.Add(time.Minute))
	earlier := metav1.NewTime(started.Add(-time.Minute))
	rev := func(attempt int32, at *metav1.Time) *syncv1.Revision {
		r := &syncv1.Revision{Status: syncv1.RevisionStatus{Attempt: attempt, StartedAt: at}}
		r.Name = "shop-1"
		return r
	}
	entry := func(name string, attempt int32, at metav1.Time) syncv1.HistoryEntry {
		return syncv1.HistoryEntry{Revision: name, Attempt: attempt, StartedAt: &at}
	}
	for _, tc := range []struct {
		name    string
		history []syncv1.HistoryEntry
		rev     *syncv1.Revision
		want    bool
	}{
		{"no attempt yet", nil, rev(0, nil), true},
		{"recorded before attempts had a start", nil, rev(2, nil), true},
		{"the attempt is in the history", []syncv1.HistoryEntry{entry("shop-1", 2, started)}, rev(2, &started), true},
		{"a later attempt of another Revision is newest", []syncv1.HistoryEntry{entry("shop-2", 1, later)}, rev(2, &started), true},
		{"another Revision's attempt began in the same second", []syncv1.HistoryEntry{entry("shop-2", 1, started)}, rev(2, &started), false},
		{"only the previous attempt is in the history", []syncv1.HistoryEntry{entry("shop-1", 1, earlier)}, rev(2, &started), false},
		{"an empty history", nil, rev(1, &started), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app := &syncv1.Application{Status: syncv1.ApplicationStatus{History: tc.history}}
			if got := recordsAttempt(app, tc.rev); got != tc.want {
				t.Errorf("recordsAttempt = %v, want %v", got, tc.want)
			}
		})
	}
}

// A rollback attempt records the Revision it holds, so a restarted
// controller keeps holding it even if the Application never showed the hold.
func TestCatchUp_RollbackHoldComesFromTheAttemptsRecord(t *testing.T) {
	for _, tc := range []struct {
		name     string
		approval *syncv1.ApprovalRecord
		want     string
	}{
		{"rollback", &syncv1.ApprovalRecord{Rollback: true, Holds: "shop-2"}, "shop-2"},
		{"manual approval", &syncv1.ApprovalRecord{Holds: "shop-2"}, ""},
		{"none", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rev := &syncv1.Revision{Status: syncv1.RevisionStatus{Approval: tc.approval}}
			if got := heldByRollback(rev); got != tc.want {
				t.Errorf("heldByRollback = %q, want %q", got, tc.want)
			}
		})
	}
}
