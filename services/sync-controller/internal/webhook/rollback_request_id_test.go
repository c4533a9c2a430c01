package webhook_test

import (
	"testing"
	"time"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestRollback_NewRequestIDToTheSameTargetIsANewRequest: `ksync rollback`
// twice to the same Revision: the second request id is recorded anew, with
// its requester and time, where the same target alone would be kept.
func TestRollback_NewRequestIDToTheSameTargetIsANewRequest(t *testing.T) {
	ns := namespace(t)
	revision(t, ns, "api-1", "api", digest("plan "+ns))
	application(t, ns, "api", nil)

	before := time.Now()
	mustAnnotate(t, alice, ns, "api", map[string]*string{
		syncv1.RollbackRequestedAnnotation: ptr("api-1"), syncv1.RollbackRequestIDAnnotation: ptr("first"),
	})
	first := recordedAt(t, stored(t, ns, "api"), syncv1.RollbackRequestedAtAnnotation, before, time.Now())
	time.Sleep(time.Until(first.Add(time.Second)))

	// The same target and id again (kubectl re-applying the annotations) is not a new request.
	mustAnnotate(t, bob, ns, "api", map[string]*string{
		syncv1.RollbackRequestedAnnotation: ptr("api-1"), syncv1.RollbackRequestIDAnnotation: ptr("first"),
	})
	got := stored(t, ns, "api")
	wantRecords(t, got, map[string]string{syncv1.RollbackRequestedByAnnotation: "alice"})
	if at := recordedAt(t, got, syncv1.RollbackRequestedAtAnnotation, before, time.Now()); !at.Equal(first) {
		t.Errorf("rollback-requested-at = %s, want the first request's %s kept", at, first)
	}

	mustAnnotate(t, bob, ns, "api", map[string]*string{
		syncv1.RollbackRequestedAnnotation: ptr("api-1"), syncv1.RollbackRequestIDAnnotation: ptr("second"),
	})
	got = stored(t, ns, "api")
	wantRecords(t, got, map[string]string{
		syncv1.RollbackRequestedAnnotation:   "api-1",
		syncv1.RollbackRequestIDAnnotation:   "second",
		syncv1.RollbackRequestedByAnnotation: "bob",
	})
	if at := recordedAt(t, got, syncv1.RollbackRequestedAtAnnotation, before, time.Now()); !at.After(first) {
		t.Errorf("rollback-requested-at = %s, want later than the first request at %s", at, first)
	}
}

func TestRollback_RequestIDThatIsNotAnIDIsRefused(t *testing.T) {
	ns := namespace(t)
	revision(t, ns, "api-1", "api", digest("plan "+ns))
	application(t, ns, "api", nil)
	err := annotate(t.Context(), alice, ns, "api", map[string]*string{
		syncv1.RollbackRequestedAnnotation: ptr("api-1"), syncv1.RollbackRequestIDAnnotation: ptr("<script>"),
	})
	wantDenied(t, err, syncv1.RollbackRequestIDAnnotation, `"<script>"`, "at most 64 letters, digits and dashes")
	wantRecords(t, stored(t, ns, "api"), map[string]string{syncv1.RollbackRequestedByAnnotation: ""})
}
