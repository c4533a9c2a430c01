package webhook_test

import (
	"context"
	"strings"
	"testing"
	"time"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/controlplane"
)

// The guide: "Records forged meanwhile survive turning webhooks on again; the
// manager then logs each pending rollback request at startup so you can
// check it."
func TestWebhooksOff_ForgedRecordsSurviveTurningThemOnAgainAndArePendingAtStart(t *testing.T) {
	ns := namespace(t)
	target := revision(t, ns, "api-1", "api", digest("plan api-1"))
	application(t, ns, "api", nil)

	forged := map[string]string{
		syncv1.ApprovedRevisionAnnotation:     "api-1",
		syncv1.ApprovedByAnnotation:           "mallory",
		syncv1.ApprovedAtAnnotation:           "2026-01-01T00:00:00Z",
		syncv1.ApprovedDigestAnnotation:       digest("plan api-1"),
		syncv1.RollbackRequestedAnnotation:    "api-1",
		syncv1.RollbackRequestedByAnnotation:  "mallory",
		syncv1.RollbackRequestedAtAnnotation:  "2026-01-01T00:00:00Z",
		syncv1.RollbackDesiredStateAnnotation: target.Spec.DesiredState.Digest,
	}
	patch := map[string]*string{}
	for k, v := range forged {
		patch[k] = ptr(v)
	}

	webhooksOff(t)
	// The API server drops the configurations a moment after their deletion:
	// bob forges until his records are stored as he wrote them.
	deadline := time.Now().Add(30 * time.Second)
	for !holds(stored(t, ns, "api"), forged) {
		if time.Now().After(deadline) {
			t.Fatalf("records forged with the webhooks off were not stored within 30s: %v", stored(t, ns, "api"))
		}
		mustAnnotate(t, bob, ns, "api", patch)
		time.Sleep(200 * time.Millisecond)
	}

	webhooksOn(t.Context(), t)
	if got := stored(t, ns, "api"); !holds(got, forged) {
		t.Fatalf("after turning the webhooks on, the Application holds %v, want the forged records %v", got, forged)
	}
	// An unrelated change through the webhook keeps them too: the webhook
	// only records what a change asks for, it does not judge old records.
	mustAnnotate(t, alice, ns, "api", map[string]*string{"team": ptr("payments")})
	if got := stored(t, ns, "api"); !holds(got, forged) || got["team"] != "payments" {
		t.Fatalf("after alice's unrelated change, the Application holds %v, want the forged records %v and team=payments", got, forged)
	}

	// The next manager to start names the forged requester, for a person to check.
	from := startReplica(t)
	report := awaitPendingReport(t, from, ns)
	for _, w := range []string{`"application"="` + ns + `/api"`, `"revision"="api-1"`, `"requestedBy"="mallory"`} {
		if !strings.Contains(report, w) {
			t.Errorf("report %q does not contain %s", report, w)
		}
	}
}

// holds reports whether annotations hold every key of want with its value.
func holds(annotations, want map[string]string) bool {
	for k, v := range want {
		if annotations[k] != v {
			return false
		}
	}
	return true
}

// webhooksOff deletes the Application webhook configurations, as installing
// with ENABLE_WEBHOOKS=false leaves none; the test's end registers them again.
func webhooksOff(t *testing.T) {
	t.Helper()
	root, err := controlplane.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	objs, err := controlplane.ReadManifests(root + "/deploy/webhook")
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range objs {
		if err := admin.Delete(t.Context(), u); err != nil {
			t.Fatalf("deleting %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
	// t.Context is done before cleanups run.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		webhooksOn(ctx, t)
	})
}

// webhooksOn registers the Application webhook configurations again and waits
// until the API server calls them.
func webhooksOn(ctx context.Context, t *testing.T) {
	t.Helper()
	root, err := controlplane.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if err := controlplane.RegisterWebhooks(ctx, admin, root, webhookPort, caBundle); err != nil {
		t.Fatal(err)
	}
	if err := controlplane.WaitForWebhooks(ctx, admin, "default", time.Minute); err != nil {
		t.Fatal(err)
	}
}
