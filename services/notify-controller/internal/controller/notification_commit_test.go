package controller

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestNotification_CommitIsTheOneThatRenderedTheRevisionThisTime: a
// notification about the desired Revision carries the commit the
// Application was rendered from this time (a revert renders an earlier
// Revision again from a newer commit); one about another Revision the
// commit its spec records.
func TestNotification_CommitIsTheOneThatRenderedTheRevisionThisTime(t *testing.T) {
	const first, revert = "1111111111111111111111111111111111111111", "3333333333333333333333333333333333333333"
	for _, tc := range []struct {
		name      string
		desired   string
		appCommit string
		source    *syncv1.RevisionSource
		want      string
	}{
		{"the desired Revision, rendered again from a revert", "api-1", revert, &syncv1.RevisionSource{Commit: first}, revert},
		{"the desired Revision, the Application naming no commit", "api-1", "", &syncv1.RevisionSource{Commit: first}, first},
		{"another Revision", "api-2", revert, &syncv1.RevisionSource{Commit: first}, first},
		{"another Revision recording no source", "api-2", revert, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app := &syncv1.Application{Status: syncv1.ApplicationStatus{DesiredRevision: tc.desired, SourceCommit: tc.appCommit}}
			rev := &syncv1.Revision{ObjectMeta: metav1.ObjectMeta{Name: "api-1"}, Spec: syncv1.RevisionSpec{Source: tc.source}}
			if got := sourceCommit(app, rev); got != tc.want {
				t.Fatalf("sourceRevision %q, want %q", got, tc.want)
			}
		})
	}
}
