package revision

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/planner"
)

// TestHistory_EntryNamesTheCommitThatRenderedTheAttempt: an attempt at the
// desired Revision is recorded with the commit the Application was rendered
// from this time, which is not the first commit that rendered the
// Revision's content when a later commit (a revert) renders it again; an
// attempt at another Revision (a rollback's target) with the commit its
// spec records.
func TestHistory_EntryNamesTheCommitThatRenderedTheAttempt(t *testing.T) {
	const first, revert = "1111111111111111111111111111111111111111", "3333333333333333333333333333333333333333"
	cases := []struct {
		name      string
		desired   string
		appCommit string
		source    *syncv1.RevisionSource
		want      string
	}{
		{name: "the desired Revision, first rendered from this commit", desired: "web-aaaa", appCommit: first,
			source: &syncv1.RevisionSource{Commit: first}, want: first},
		{name: "the desired Revision, rendered again from a revert", desired: "web-aaaa", appCommit: revert,
			source: &syncv1.RevisionSource{Commit: first}, want: revert},
		{name: "the desired Revision, the Application naming no commit", desired: "web-aaaa",
			source: &syncv1.RevisionSource{Commit: first}, want: first},
		{name: "a rollback's target", desired: "web-bbbb", appCommit: revert,
			source: &syncv1.RevisionSource{Commit: first}, want: first},
		{name: "a Revision recording no source", desired: "web-bbbb", appCommit: revert},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			app := &syncv1.Application{Status: syncv1.ApplicationStatus{DesiredRevision: tc.desired, SourceCommit: tc.appCommit}}
			ro := &rollout{Scope: planner.Scope{
				App: app,
				Rev: &syncv1.Revision{ObjectMeta: metav1.ObjectMeta{Name: "web-aaaa"}, Spec: syncv1.RevisionSpec{Source: tc.source}},
				Now: metav1.Now(),
			}}
			ro.startHistory()
			if h := app.Status.History; len(h) != 1 || h[0].Revision != "web-aaaa" || h[0].SourceCommit != tc.want {
				t.Fatalf("history %+v, want one entry for web-aaaa with commit %q", h, tc.want)
			}
		})
	}
}
