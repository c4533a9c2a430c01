package payload

import (
	"encoding/json"
	"strings"
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestSign_IsHMACSHA256InHex checks Sign against RFC 4231 test case 2.
func TestSign_IsHMACSHA256InHex(t *testing.T) {
	got := Sign([]byte("what do ya want for nothing?"), []byte("Jefe"))
	want := "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
	if got != want {
		t.Errorf("Sign = %s, want %s", got, want)
	}
}

func TestSlack_ShortTextWithTheApproveCommand(t *testing.T) {
	plan := &Plan{Digest: "sha256:ab", Summary: syncv1.PlanSummary{Create: 1, Update: 2}}
	for _, tc := range []struct {
		name string
		n    Notification
		want string
	}{
		{name: "awaiting approval", n: Notification{Event: syncv1.NotificationAwaitingApproval, Revision: "api-1", SourceRevision: "0123456789abcdef",
			Plan: plan, ApproveCommand: "ksync approve api -n payments --revision api-1"},
			want: "payments/api: Revision api-1 (commit 0123456789ab) is waiting for approval (plan: 1 to create, 2 to update, 0 to delete, 0 unchanged)\n" +
				"Approve with: `ksync approve api -n payments --revision api-1`"},
		{name: "failed", n: Notification{Event: syncv1.NotificationFailed, Revision: "api-1", Reason: "HookFailed", Message: "Job migrate failed"},
			want: "payments/api: Revision api-1 failed (HookFailed): Job migrate failed"},
		{name: "healthy", n: Notification{Event: syncv1.NotificationHealthy, Revision: "api-1"},
			want: "payments/api: Revision api-1 is deployed and Healthy"},
		{name: "applying", n: Notification{Event: syncv1.NotificationApplying, Revision: "api-1", Attempt: 2},
			want: "payments/api: Revision api-1 is rolling out, attempt 2"},
		{name: "rolled back", n: Notification{Event: syncv1.NotificationRolledBack, Revision: "api-0"},
			want: "payments/api: Revision api-0 is Healthy again after a rollback"},
		{name: "diagnosed", n: Notification{Event: syncv1.NotificationDiagnosed, Revision: "api-1", Message: "Pod api-x: ErrImagePull"},
			want: "payments/api: Revision api-1 diagnosed: Pod api-x: ErrImagePull"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.n.Application = ApplicationRef{Namespace: "payments", Name: "api"}
			raw, err := Slack(&tc.n)
			if err != nil {
				t.Fatal(err)
			}
			var body map[string]string
			if err := json.Unmarshal(raw, &body); err != nil {
				t.Fatal(err)
			}
			if body["text"] != tc.want || len(body) != 1 {
				t.Errorf("Slack body %q, want {text: %q}", raw, tc.want)
			}
			if tc.n.ApproveCommand == "" && strings.Contains(body["text"], "ksync approve") {
				t.Errorf("approve command outside AwaitingApproval: %q", body["text"])
			}
		})
	}
}
