package commands

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

func entry(rev string, result syncv1.RevisionPhase) syncv1.HistoryEntry {
	return syncv1.HistoryEntry{Revision: rev, Result: result}
}

func TestRollbackTarget_NewestKnownGoodOtherThanDesiredAndDeployed(t *testing.T) {
	app := func(desired, deployed string, history ...syncv1.HistoryEntry) *syncv1.Application {
		a := application("shop", "api")
		a.Status = syncv1.ApplicationStatus{DesiredRevision: desired, DeployedRevision: deployed, History: history}
		return a
	}
	existing := func(names ...string) func(string) (bool, error) {
		return func(name string) (bool, error) { return slices.Contains(names, name), nil }
	}
	healthy := func(name string, created int) syncv1.Revision {
		r := syncv1.Revision{Status: syncv1.RevisionStatus{Phase: syncv1.PhaseHealthy}}
		r.Name, r.CreationTimestamp = name, metav1.NewTime(time.Date(2026, 12, 1, 0, created, 0, 0, time.UTC))
		return r
	}
	cases := []struct {
		name      string
		app       *syncv1.Application
		exists    func(string) (bool, error)
		revisions []syncv1.Revision
		want      string
		wantErr   string
	}{
		{
			name: "skips the desired and deployed Revisions",
			app: app("api-4", "api-3",
				entry("api-4", syncv1.PhaseHealthy), entry("api-3", syncv1.PhaseHealthy), entry("api-2", syncv1.PhaseHealthy), entry("api-1", syncv1.PhaseHealthy)),
			exists: existing("api-1", "api-2", "api-3", "api-4"),
			want:   "api-2",
		},
		{
			name: "skips attempts that did not end Healthy",
			app: app("api-4", "api-3",
				entry("api-2", syncv1.PhaseFailed), entry("api-5", syncv1.PhaseRolledBack), entry("api-6", syncv1.PhaseApplying), entry("api-1", syncv1.PhaseHealthy)),
			exists: existing("api-1", "api-2", "api-5", "api-6"),
			want:   "api-1",
		},
		{
			name:   "skips Revisions that were deleted",
			app:    app("api-4", "api-3", entry("api-2", syncv1.PhaseHealthy), entry("api-1", syncv1.PhaseHealthy)),
			exists: existing("api-1"),
			want:   "api-1",
		},
		{
			name: "history full of failed retries: the newest Healthy Revision further back",
			app: app("api-3", "api-2",
				entry("api-3", syncv1.PhaseFailed), entry("api-3", syncv1.PhaseFailed), entry("api-3", syncv1.PhaseFailed)),
			exists:    existing("api-1", "api-2", "api-3"),
			revisions: []syncv1.Revision{healthy("api-0", 1), healthy("api-1", 2), healthy("api-2", 3), {Status: syncv1.RevisionStatus{Phase: syncv1.PhaseFailed}}},
			want:      "api-1",
		},
		{
			name:      "fails when only the desired and deployed Revisions were Healthy",
			app:       app("api-2", "api-1", entry("api-2", syncv1.PhaseHealthy), entry("api-1", syncv1.PhaseHealthy), entry("api-0", syncv1.PhaseFailed)),
			exists:    existing("api-0", "api-1", "api-2"),
			revisions: []syncv1.Revision{healthy("api-1", 1), healthy("api-2", 2)},
			wantErr:   `Application shop/api has no Revision to roll back to: neither status.history nor its Revisions hold a Healthy one other than desired "api-2" and deployed "api-1"`,
		},
		{
			name:    "fails naming the deleted Revisions",
			app:     app("api-3", "api-3", entry("api-2", syncv1.PhaseHealthy), entry("api-1", syncv1.PhaseHealthy)),
			exists:  existing(),
			wantErr: `other than desired "api-3" and deployed "api-3" that still exists (deleted: api-2, api-1)`,
		},
		{
			name:    "fails without history",
			app:     app("api-1", ""),
			exists:  existing(),
			wantErr: `has no Revision to roll back to`,
		},
		{
			name:    "passes on a failure to read a Revision",
			app:     app("api-2", "api-1", entry("api-0", syncv1.PhaseHealthy)),
			exists:  func(string) (bool, error) { return false, errors.New("reading Revision shop/api-0: forbidden") },
			wantErr: "reading Revision shop/api-0: forbidden",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := rollbackTarget(tc.app, tc.exists, func() ([]syncv1.Revision, error) { return tc.revisions, nil })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("target %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestRollback_RequestsTheNewestKnownGoodRevision(t *testing.T) {
	ns := namespace(t, "rollback", nil)
	app := application(ns, "api")
	app.Annotations = map[string]string{syncv1.ApprovedRevisionAnnotation: "api-4"}
	app.Status = syncv1.ApplicationStatus{
		DesiredRevision: "api-5", DeployedRevision: "api-4",
		History: []syncv1.HistoryEntry{
			entry("api-5", syncv1.PhaseFailed),
			entry("api-4", syncv1.PhaseHealthy),
			entry("api-3", syncv1.PhaseFailed),
			entry("api-9", syncv1.PhaseHealthy), // its Revision is gone
			entry("api-2", syncv1.PhaseHealthy),
			entry("api-1", syncv1.PhaseHealthy),
		},
	}
	createApplication(t, app)
	for _, rev := range []string{"api-1", "api-2", "api-3", "api-4", "api-5"} {
		createRevision(t, ns, "api", rev, syncv1.RevisionStatus{})
	}
	before := getApp(t, ns, "api")

	r := ksyncWithInput(t, strings.NewReader("no\n"), "rollback", "api", "-n", ns)
	r.expect(t, exitFailed)
	if want := "Rolling back api to Revision api-2 (from api-5)\nRoll back? [y/N] "; r.stdout != want {
		t.Errorf("stdout %q, want %q", r.stdout, want)
	}
	if want := "ksync: rollback to Revision api-2 cancelled; Application rollback/api not changed\n"; r.stderr != want {
		t.Errorf("stderr %q, want %q", r.stderr, want)
	}
	expectOnlyAnnotations(t, before, nil)

	r = ksync(t, "rollback", "api", "-n", ns, "--yes", "--timeout=0")
	r.expect(t, 0)
	id := getApp(t, ns, "api").Annotations[syncv1.RollbackRequestIDAnnotation]
	if want := "Rolling back api to Revision api-2 (from api-5)\nRequested rollback of Application rollback/api to Revision api-2 (request " + id + ").\n"; r.stdout != want {
		t.Errorf("stdout %q, want %q", r.stdout, want)
	}
	expectOnlyAnnotations(t, before, map[string]string{syncv1.RollbackRequestedAnnotation: "api-2", syncv1.RollbackRequestIDAnnotation: id})
}

func TestRollback_RefusesWithoutKnownGoodRevision(t *testing.T) {
	ns := namespace(t, "rollback-none", nil)
	app := application(ns, "api")
	app.Status = syncv1.ApplicationStatus{
		DesiredRevision: "api-2", DeployedRevision: "api-1",
		History: []syncv1.HistoryEntry{entry("api-2", syncv1.PhaseHealthy), entry("api-1", syncv1.PhaseHealthy), entry("api-0", syncv1.PhaseFailed)},
	}
	createApplication(t, app)
	before := getApp(t, ns, "api")

	r := ksync(t, "rollback", "api", "-n", ns, "--yes")
	r.expect(t, exitFailed)
	want := `ksync: Application rollback-none/api has no Revision to roll back to: neither status.history nor its Revisions hold a Healthy one other than desired "api-2" and deployed "api-1"` + "\n"
	if r.stdout != "" || r.stderr != want {
		t.Errorf("stdout %q\nstderr %q\nwant   %q", r.stdout, r.stderr, want)
	}
	expectOnlyAnnotations(t, before, nil)
}

// Failed retries of one Revision can fill the bounded history; the newest
// Healthy Revision still in the cluster is then the target, and the
// Revision rolled back from is the failing desired one, which is held.
func TestRollback_FindsAHealthyRevisionPastAHistoryOfFailedRetries(t *testing.T) {
	ns := namespace(t, "rollback-retries", nil)
	app := application(ns, "api")
	app.Status = syncv1.ApplicationStatus{DesiredRevision: "api-3", DeployedRevision: "api-2"}
	for range syncv1.MaxHistoryEntries {
		app.Status.History = append(app.Status.History, entry("api-3", syncv1.PhaseFailed))
	}
	createApplication(t, app)
	createRevision(t, ns, "api", "api-1", syncv1.RevisionStatus{Phase: syncv1.PhaseHealthy})
	createRevision(t, ns, "api", "api-2", syncv1.RevisionStatus{Phase: syncv1.PhaseHealthy})
	createRevision(t, ns, "api", "api-3", syncv1.RevisionStatus{Phase: syncv1.PhaseFailed})
	createRevision(t, ns, "other", "other-1", syncv1.RevisionStatus{Phase: syncv1.PhaseHealthy})
	before := getApp(t, ns, "api")

	r := ksync(t, "rollback", "api", "-n", ns, "--yes", "--timeout=0")
	r.expect(t, 0)
	id := getApp(t, ns, "api").Annotations[syncv1.RollbackRequestIDAnnotation]
	if want := "Rolling back api to Revision api-1 (from api-3)\nRequested rollback of Application rollback-retries/api to Revision api-1 (request " + id + ").\n"; r.stdout != want {
		t.Errorf("stdout %q, want %q", r.stdout, want)
	}
	expectOnlyAnnotations(t, before, map[string]string{syncv1.RollbackRequestedAnnotation: "api-1", syncv1.RollbackRequestIDAnnotation: id})
}
