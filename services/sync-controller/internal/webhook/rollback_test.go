package webhook_test

import (
	"testing"
	"time"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

func TestRollback_RecordsRequesterTimeAndDesiredState(t *testing.T) {
	ns := namespace(t)
	target := revision(t, ns, "api-1", "api", digest("plan "+ns))
	other := revision(t, ns, "api-2", "api", digest("plan 2 "+ns))
	application(t, ns, "api", nil)

	before := time.Now()
	mustAnnotate(t, alice, ns, "api", map[string]*string{syncv1.RollbackRequestedAnnotation: ptr("api-1")})
	got := stored(t, ns, "api")
	wantRecords(t, got, map[string]string{
		syncv1.RollbackRequestedAnnotation:    "api-1",
		syncv1.RollbackRequestedByAnnotation:  "alice",
		syncv1.RollbackDesiredStateAnnotation: target.Spec.DesiredState.Digest,
	})
	first := recordedAt(t, got, syncv1.RollbackRequestedAtAnnotation, before, time.Now())

	t.Run("a new target is a new request", func(t *testing.T) {
		time.Sleep(time.Until(first.Add(time.Second)))
		mustAnnotate(t, bob, ns, "api", map[string]*string{syncv1.RollbackRequestedAnnotation: ptr("api-2")})
		got := stored(t, ns, "api")
		wantRecords(t, got, map[string]string{
			syncv1.RollbackRequestedByAnnotation:  "bob",
			syncv1.RollbackDesiredStateAnnotation: other.Spec.DesiredState.Digest,
		})
		if at := recordedAt(t, got, syncv1.RollbackRequestedAtAnnotation, before, time.Now()); !at.After(first) {
			t.Errorf("rollback-requested-at = %s, want later than the first request at %s", at, first)
		}
	})
}

func TestRollback_HandEditedRecordsAreOverwrittenAndRemovedWithTheRequest(t *testing.T) {
	ns := namespace(t)
	target := revision(t, ns, "api-1", "api", "")
	application(t, ns, "api", nil)
	mustAnnotate(t, alice, ns, "api", map[string]*string{syncv1.RollbackRequestedAnnotation: ptr("api-1")})
	truth := stored(t, ns, "api")

	mustAnnotate(t, bob, ns, "api", map[string]*string{
		syncv1.RollbackRequestedByAnnotation:  ptr("mallory"),
		syncv1.RollbackRequestedAtAnnotation:  ptr("2001-01-01T00:00:00Z"),
		syncv1.RollbackDesiredStateAnnotation: ptr(digest("a desired state nobody asked for")),
	})
	wantRecords(t, stored(t, ns, "api"), map[string]string{
		syncv1.RollbackRequestedByAnnotation:  "alice",
		syncv1.RollbackRequestedAtAnnotation:  truth[syncv1.RollbackRequestedAtAnnotation],
		syncv1.RollbackDesiredStateAnnotation: target.Spec.DesiredState.Digest,
	})

	mustAnnotate(t, bob, ns, "api", map[string]*string{syncv1.RollbackRequestedAnnotation: nil})
	if got := stored(t, ns, "api"); len(got) != 0 {
		t.Errorf("annotations = %v after removing %s, want none", got, syncv1.RollbackRequestedAnnotation)
	}

	t.Run("records without a request are dropped", func(t *testing.T) {
		mustAnnotate(t, bob, ns, "api", map[string]*string{syncv1.RollbackRequestedByAnnotation: ptr("mallory")})
		if got := stored(t, ns, "api"); len(got) != 0 {
			t.Errorf("annotations = %v, want none", got)
		}
	})
}

func TestRollback_RefusesARevisionThatIsNotTheApplications(t *testing.T) {
	tests := []struct {
		name   string
		target string
		want   string
	}{
		{"Revision does not exist", "api-404", "api-404 not found"},
		{"Revision of another Application", "web-1", `belongs to Application "web", not "api"`},
		{"empty target", "", "is empty"},
	}
	ns := namespace(t)
	revision(t, ns, "web-1", "web", "")
	application(t, ns, "api", nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := annotate(t.Context(), alice, ns, "api", map[string]*string{syncv1.RollbackRequestedAnnotation: ptr(tt.target)})
			wantDenied(t, err, syncv1.RollbackRequestedAnnotation, tt.want)
			if got := stored(t, ns, "api"); len(got) != 0 {
				t.Errorf("annotations = %v after a refused request, want none", got)
			}
		})
	}
}
