package webhook_test

import (
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestApproval_RevisionThatRolledOutIsRefused: approving a plan that has
// rolled out (or never will) would report success for nothing; only a
// Revision that waits, or failed and waits for a retry, takes an approval.
func TestApproval_RevisionThatRolledOutIsRefused(t *testing.T) {
	tests := []struct {
		phase   syncv1.RevisionPhase
		refused bool
	}{
		{syncv1.PhaseHealthy, true},
		{syncv1.PhaseApplying, true},
		{syncv1.PhaseSuperseded, true},
		{syncv1.PhaseRolledBack, true},
		{syncv1.PhaseAwaitingApproval, false},
		{syncv1.PhaseFailed, false},
	}
	for _, tt := range tests {
		t.Run(string(tt.phase), func(t *testing.T) {
			ns := namespace(t)
			plan := digest("plan " + ns)
			rev := revision(t, ns, "api-1", "api", plan)
			rev.Status.Phase = tt.phase
			if err := admin.Status().Update(t.Context(), rev); err != nil {
				t.Fatal(err)
			}
			application(t, ns, "api", nil)

			err := annotate(t.Context(), alice, ns, "api", map[string]*string{
				syncv1.ApprovedRevisionAnnotation: ptr("api-1"),
				syncv1.ApproveDigestAnnotation:    ptr(plan),
			})
			if !tt.refused {
				if err != nil {
					t.Fatalf("approving a %s Revision: %v, want it recorded", tt.phase, err)
				}
				wantRecords(t, stored(t, ns, "api"), map[string]string{syncv1.ApprovedByAnnotation: "alice", syncv1.ApprovedDigestAnnotation: plan})
				return
			}
			wantDenied(t, err, syncv1.ApprovedRevisionAnnotation, "Revision "+ns+"/api-1 is "+string(tt.phase)+" and waits for no approval")
			wantRecords(t, stored(t, ns, "api"), map[string]string{syncv1.ApprovedByAnnotation: "", syncv1.ApprovedDigestAnnotation: ""})
		})
	}
}
