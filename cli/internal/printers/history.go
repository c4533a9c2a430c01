package printers

import (
	"io"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// History writes the table of `ksync history`, newest first as in status:
// REVISION, RESULT, REASON, STARTED, FINISHED, APPROVED-BY, ROLLBACK; wide
// adds COMMIT, PLAN (the short plan digest), APPROVED-AT and DRIFT (what a
// self-heal attempt corrected).
func History(w io.Writer, entries []syncv1.HistoryEntry, o Options) error {
	t := Table{Header: []string{"REVISION", "RESULT", "REASON", "STARTED", "FINISHED", "APPROVED-BY", "ROLLBACK"}}
	if o.Wide {
		t.Header = append(t.Header, "COMMIT", "PLAN", "APPROVED-AT", "DRIFT")
	}
	for _, e := range entries {
		var approvedBy, approvedAt, rollback string
		if e.Approval != nil {
			approvedBy = e.Approval.By
			approvedAt = Timestamp(&e.Approval.At)
		}
		if e.Rollback {
			rollback = "yes"
		}
		row := []Cell{
			Plain(e.Revision),
			phaseCell(e.Result),
			Plain(e.Reason),
			Plain(Timestamp(e.StartedAt)),
			Plain(Timestamp(e.FinishedAt)),
			Plain(approvedBy),
			Plain(rollback),
		}
		if o.Wide {
			row = append(row, Plain(ShortCommit(e.SourceCommit)), Plain(ShortDigest(e.PlanDigest)), Plain(approvedAt), Plain(e.Drift))
		}
		t.Add(row...)
	}
	return t.Write(w, o.Color)
}
