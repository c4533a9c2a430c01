package commands

import (
	"encoding/json"
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

func TestHistory_ListsAttemptsWithApprovals(t *testing.T) {
	ns := namespace(t, "history", nil)
	app := application(ns, "api")
	app.Status = syncv1.ApplicationStatus{
		DesiredRevision: "api-3", DeployedRevision: "api-2",
		History: []syncv1.HistoryEntry{
			{
				Revision: "api-3", SourceCommit: "3333333333333333333333333333333333333333", PlanDigest: digest("3"),
				Result: syncv1.PhaseFailed, Reason: syncv1.ReasonHookFailed,
				StartedAt: ts("2026-07-01T11:00:00Z"), FinishedAt: ts("2026-07-01T11:04:00Z"),
				Approval: &syncv1.ApprovalRecord{Revision: "api-3", By: "alice@example.com", At: *ts("2026-07-01T10:58:00Z"), Digest: digest("3")},
			},
			{
				Revision: "api-2", SourceCommit: "2222222222222222222222222222222222222222", PlanDigest: digest("2"),
				Result: syncv1.PhaseHealthy, StartedAt: ts("2026-07-01T09:30:00Z"), FinishedAt: ts("2026-07-01T09:31:00Z"), Rollback: true,
				Approval: &syncv1.ApprovalRecord{Revision: "api-2", By: "bob@example.com", At: *ts("2026-07-01T09:29:00Z"), Digest: digest("d"), Rollback: true},
			},
			{
				Revision: "api-1", SourceCommit: "1111111111111111111111111111111111111111", PlanDigest: digest("1"),
				Result: syncv1.PhaseSuperseded, Reason: syncv1.ReasonSuperseded, StartedAt: ts("2026-07-01T08:00:00Z"), FinishedAt: ts("2026-07-01T08:02:00Z"),
			},
		},
	}
	createApplication(t, app)
	createApplication(t, application(ns, "fresh"))

	t.Run("as a table", func(t *testing.T) {
		r := ksync(t, "history", "api", "-n", ns)
		r.expect(t, 0)
		golden(t, "history", r.stdout)
	})
	t.Run("wide", func(t *testing.T) {
		r := ksync(t, "history", "-o", "wide", "api", "-n", ns)
		r.expect(t, 0)
		golden(t, "history-wide", r.stdout)
	})
	t.Run("as stable JSON with the approval records", func(t *testing.T) {
		r := ksync(t, "history", "api", "-n", ns, "-o", "json")
		r.expect(t, 0)
		golden(t, "history.json", r.stdout)
		var got historyExport
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatalf("-o json is not JSON: %v", err)
		}
		if len(got.History) != 3 || got.History[0].Approval == nil || got.History[0].Approval.By != "alice@example.com" ||
			!got.History[1].Approval.Rollback || got.History[2].Approval != nil {
			t.Errorf("export %+v", got)
		}
	})
	t.Run("empty as JSON", func(t *testing.T) {
		r := ksync(t, "history", "fresh", "-n", ns, "-o", "json")
		r.expect(t, 0)
		var got map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatal(err)
		}
		if h, ok := got["history"].([]any); !ok || len(h) != 0 {
			t.Errorf("history %#v, want []", got["history"])
		}
	})
	t.Run("empty as a table says so on stderr", func(t *testing.T) {
		r := ksync(t, "history", "fresh", "-n", ns)
		r.expect(t, 0)
		if r.stdout != "" || r.stderr != "Application history/fresh has no deployment history yet.\n" {
			t.Errorf("stdout %q stderr %q", r.stdout, r.stderr)
		}
	})
}
