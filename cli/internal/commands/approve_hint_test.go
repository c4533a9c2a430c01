package commands

import (
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestApprove_TheHintApprovesTheRevisionItNames: the approve command the
// services and the console print (Application.ApproveCommand) approves the
// Revision it was printed for, and nothing else once a newer desired state
// has superseded it: the reader saw that plan, not the newer one.
func TestApprove_TheHintApprovesTheRevisionItNames(t *testing.T) {
	cases := []struct {
		name     string
		newer    bool
		wantCode int
		approved map[string]string
	}{
		{name: "the Revision still waits", wantCode: 0,
			approved: map[string]string{syncv1.ApprovedRevisionAnnotation: "api-2", syncv1.ApproveDigestAnnotation: digest("a")}},
		{name: "a newer desired state superseded it", newer: true, wantCode: exitFailed},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := namespace(t, "approve-hint-"+string(rune('a'+i)), nil)
			before := approvable(t, ns)
			hint := before.ApproveCommand("api-2")
			if tc.newer {
				createRevision(t, ns, "api", "api-3", syncv1.RevisionStatus{Phase: syncv1.PhaseAwaitingApproval, Plan: secretPlan()})
				rev := &syncv1.Revision{}
				if err := k8s.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "api-2"}, rev); err != nil {
					t.Fatal(err)
				}
				rev.Status.Phase = syncv1.PhaseSuperseded
				if err := k8s.Status().Update(t.Context(), rev); err != nil {
					t.Fatal(err)
				}
				before.Status.DesiredRevision = "api-3"
				if err := k8s.Status().Update(t.Context(), before); err != nil {
					t.Fatal(err)
				}
				before = getApp(t, ns, "api")
			}

			args, ok := strings.CutPrefix(hint, "ksync ")
			if !ok {
				t.Fatalf("hint %q is not a ksync command", hint)
			}
			r := ksync(t, append(strings.Fields(args), "--yes")...)
			r.expect(t, tc.wantCode)
			expectOnlyAnnotations(t, before, tc.approved)
		})
	}
}
