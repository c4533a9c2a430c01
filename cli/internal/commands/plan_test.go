package commands

import (
	"encoding/json"
	"strings"
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// secretValue stands for a value the sync-controller failed to redact; it
// must never be printed.
const secretValue = "c3VwZXItc2VjcmV0LXBhc3N3b3Jk"

func secretPlan() *syncv1.Plan {
	return &syncv1.Plan{
		Digest:  digest("a"),
		Summary: syncv1.PlanSummary{Create: 1, Update: 2},
		Entries: []syncv1.PlanEntry{
			{
				ObjectRef: syncv1.ObjectRef{Version: "v1", Kind: "Secret", Namespace: "plan", Name: "db"},
				Action:    syncv1.ActionUpdate,
				Diff: "--- live\n+++ desired\n@@ -1,6 +1,7 @@\n apiVersion: v1\n data:\n" +
					"-  password: '*** (old value)'\n+  password: '*** (new value)'\n" +
					"+  api-key: " + secretValue + "\n" +
					"   username: '*** (unchanged)'\n kind: Secret\n",
			},
			{
				ObjectRef: syncv1.ObjectRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "plan", Name: "api"},
				Action:    syncv1.ActionUpdate,
				Wave:      1,
				Diff:      "--- live\n+++ desired\n@@ -3,3 +3,3 @@\n spec:\n-  replicas: 2\n+  replicas: 3\n   selector:\n",
			},
			{
				ObjectRef: syncv1.ObjectRef{Group: "batch", Version: "v1", Kind: "Job", Namespace: "plan", Name: "migrate"},
				Action:    syncv1.ActionCreate,
				Hook:      syncv1.HookPreSync,
			},
		},
	}
}

func TestPlan_PrintsTheRedactedPlan(t *testing.T) {
	ns := namespace(t, "plan", nil)
	app := application(ns, "api")
	app.Status.DesiredRevision = "api-2"
	createApplication(t, app)
	createApplication(t, application(ns, "fresh"))
	createRevision(t, ns, "api", "api-2", syncv1.RevisionStatus{Phase: syncv1.PhaseAwaitingApproval, Plan: secretPlan()})
	createRevision(t, ns, "api", "api-1", syncv1.RevisionStatus{Phase: syncv1.PhaseHealthy, Plan: &syncv1.Plan{Digest: digest("1"), Summary: syncv1.PlanSummary{Unchanged: 3}}})
	createRevision(t, ns, "api", "api-3", syncv1.RevisionStatus{})
	createRevision(t, ns, "other", "other-1", syncv1.RevisionStatus{Plan: &syncv1.Plan{Digest: digest("0")}})

	t.Run("of the desired Revision, never showing a Secret value", func(t *testing.T) {
		r := ksync(t, "plan", "api", "-n", ns)
		r.expect(t, 0)
		golden(t, "plan", r.stdout)
		if strings.Contains(r.stdout, secretValue) {
			t.Fatalf("plan shows a Secret value:\n%s", r.stdout)
		}
		if want := "ksync: warning: hid 1 Secret value(s) that the plan of Revision plan/api-2 shows unredacted\n"; r.stderr != want {
			t.Errorf("stderr %q, want %q", r.stderr, want)
		}
	})
	t.Run("as JSON, never showing a Secret value", func(t *testing.T) {
		r := ksync(t, "plan", "api", "-n", ns, "-o", "json")
		r.expect(t, 0)
		if strings.Contains(r.stdout, secretValue) {
			t.Fatalf("plan -o json shows a Secret value:\n%s", r.stdout)
		}
		var got planExport
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatalf("-o json is not JSON: %v\n%s", err, r.stdout)
		}
		if got.Revision != "api-2" || got.Plan.Digest != digest("a") || len(got.Plan.Entries) != 3 || got.Phase != syncv1.PhaseAwaitingApproval {
			t.Errorf("export %+v", got)
		}
		if again := ksync(t, "plan", "api", "-n", ns, "-o", "json"); again.stdout != r.stdout {
			t.Error("-o json changed between runs")
		}
	})
	t.Run("of another Revision with --revision", func(t *testing.T) {
		r := ksync(t, "plan", "api", "--revision", "api-1", "-n", ns)
		r.expect(t, 0)
		if !strings.Contains(r.stdout, "Digest:    "+digest("1")+"\n") || !strings.Contains(r.stdout, "0 to create, 0 to update, 0 to delete, 3 unchanged") {
			t.Errorf("stdout:\n%s", r.stdout)
		}
	})

	failures := []struct {
		name string
		args []string
		want string
	}{
		{"a Revision not planned yet", []string{"plan", "api", "--revision", "api-3"},
			"ksync: Revision plan/api-3 has no plan yet (status.plan is empty, phase not yet reported); the sync-controller plans it after rendering\n"},
		{"a missing Revision", []string{"plan", "api", "--revision", "api-9"},
			"ksync: Revision plan/api-9 (--revision of Application api) not found\n"},
		{"a Revision of another Application", []string{"plan", "api", "--revision", "other-1"},
			"ksync: Revision plan/other-1 belongs to Application other, not api\n"},
		{"an Application not rendered yet", []string{"plan", "fresh"},
			"ksync: Application plan/fresh has no desired Revision yet (status.desiredRevision is empty); see 'kubectl describe applications.sync.kuvryn.io -n plan fresh'\n"},
	}
	for _, tc := range failures {
		t.Run("fails for "+tc.name, func(t *testing.T) {
			r := ksync(t, append(tc.args, "-n", ns)...)
			r.expect(t, exitFailed)
			if r.stderr != tc.want {
				t.Errorf("stderr %q, want %q", r.stderr, tc.want)
			}
		})
	}
}
