package console

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// waitingRevision creates the Revision an Application waits on: planned,
// with hooks, waves and a diagnosis, as the sync-controller records them.
func (f *fixture) waitingRevision(name, app string) *syncv1.Revision {
	f.t.Helper()
	return f.revision(name, app, &syncv1.RevisionStatus{
		Phase: syncv1.PhaseAwaitingApproval,
		// The Service exists (waitingApplication creates it), the
		// Deployment does not.
		Inventory: &syncv1.Inventory{Entries: []string{f.ns + "_api__Service_v1", f.ns + "_api_apps_Deployment_v1"}},
		Plan: &syncv1.Plan{Digest: "sha256:" + strings.Repeat("cd", 32), PlannedAt: metav1.Now(),
			Summary: syncv1.PlanSummary{Create: 1, Update: 1},
			Entries: []syncv1.PlanEntry{
				{ObjectRef: syncv1.ObjectRef{Version: "v1", Kind: "ConfigMap", Namespace: f.ns, Name: "settings"}, Action: syncv1.ActionUpdate,
					Diff: "-  level: info\n+  level: debug"},
				{ObjectRef: syncv1.ObjectRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: f.ns, Name: "api"}, Action: syncv1.ActionCreate, Wave: 1},
			}},
		Hooks: &syncv1.HookList{Items: []syncv1.HookStatus{{ObjectRef: syncv1.ObjectRef{Group: "batch", Version: "v1", Kind: "Job", Namespace: f.ns, Name: "migrate"},
			Stage: "pre-sync", State: syncv1.HookPending}}},
		Waves: []syncv1.WaveStatus{{Wave: 0, State: syncv1.WavePending, Objects: 1}, {Wave: 1, State: syncv1.WavePending, Objects: 1}},
		Diagnosis: &syncv1.Diagnosis{Summary: "Deployment api is not available",
			Causes: []syncv1.Cause{{Chain: []syncv1.CauseLink{
				{ObjectRef: syncv1.ObjectRef{Kind: "Deployment", Name: "api"}, Message: "0/1 replicas available"},
				{ObjectRef: syncv1.ObjectRef{Kind: "Pod", Name: "api-1"}, Message: "ImagePullBackOff"},
			}}}},
	})
}

// waitingApplication is an Application whose desired Revision waits for
// approval and whose history holds an approved attempt and a rollback.
func (f *fixture) waitingApplication(name string, annotations map[string]string) *syncv1.Application {
	f.t.Helper()
	rev := f.waitingRevision(name+"-0123456789", name)
	if err := admin.Create(context.Background(), &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "api"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}); err != nil && !apierrors.IsAlreadyExists(err) {
		f.t.Fatal(err)
	}
	at := metav1.NewTime(time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC))
	return f.application(name, annotations, &syncv1.ApplicationStatus{
		DesiredRevision: rev.Name, DeployedRevision: name + "-aaaaaaaaaa",
		Sync: syncv1.SyncStateOutOfSync, Health: syncv1.HealthHealthy, Phase: syncv1.PhaseAwaitingApproval,
		Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "AwaitingApproval",
			Message: "Revision " + rev.Name + " waits for approval", LastTransitionTime: at}},
		History: []syncv1.HistoryEntry{
			{Revision: name + "-aaaaaaaaaa", SourceCommit: "1111111", Result: syncv1.PhaseHealthy, StartedAt: &at, FinishedAt: &at,
				Approval: &syncv1.ApprovalRecord{Revision: name + "-aaaaaaaaaa", By: "alice@example.com", At: at, Digest: "sha256:feed"}},
			{Revision: name + "-bbbbbbbbbb", SourceCommit: "2222222", Result: syncv1.PhaseRolledBack, Reason: "HealthFailure",
				StartedAt: &at, Rollback: true},
		},
	})
}

// TestApplicationPage_ShowsPlanHistoryAndTheApproveCommand: an Application
// waiting for approval shows its Revisions, conditions, the redacted plan
// with its digest, the ksync approve command (never a button), hooks,
// waves, the diagnosis chain and its history with approvals and rollbacks.
func TestApplicationPage_ShowsPlanHistoryAndTheApproveCommand(t *testing.T) {
	f := start(t)
	f.waitingApplication("shop", nil)
	s := f.signIn(f.token("viewer", true))
	resp := f.do(http.MethodGet, "/applications/"+f.ns+"/shop", []*http.Cookie{s}, nil)
	if resp.status != http.StatusOK {
		t.Fatalf("status %d:\n%s", resp.status, resp.body)
	}
	for _, want := range []string{
		"shop-0123456789", "shop-aaaaaaaaaa", "AwaitingApproval", "waits for approval",
		"sha256:" + strings.Repeat("cd", 32), "ksync approve shop -n " + f.ns + " --revision shop-0123456789",
		"-  level: info", "level: debug", "Deployment", "migrate", "pre-sync",
		"Deployment api is not available", "ImagePullBackOff",
		"alice@example.com", "sha256:feed", "HealthFailure", "rollback",
	} {
		if !strings.Contains(resp.body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(resp.body, "<button type=\"submit\">Approve") || strings.Contains(resp.body, `action="/applications`) {
		t.Error("the page offers to approve; the console must only show the command")
	}

	if resp := f.do(http.MethodGet, "/applications/"+f.ns+"/missing", []*http.Cookie{s}, nil); resp.status != http.StatusNotFound {
		t.Errorf("a missing Application: %d, want 404", resp.status)
	}
}
