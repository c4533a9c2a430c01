package scenarios_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/e2e/harness"
)

// notification is the part of a webhook body the scenario reads.
type notification struct {
	Event          string `json:"event"`
	Revision       string `json:"revision"`
	SourceRevision string `json:"sourceRevision"`
	ApproveCommand string `json:"approveCommand"`
	Plan           *struct {
		Digest string `json:"digest"`
	} `json:"plan"`
}

// TestE2E_AwaitingApprovalReachesTheSinkAndItsCommandDeploys: with the
// notify-controller running as its own process, a manual Application's
// AwaitingApproval reaches an https webhook sink, signed, with the ksync
// approve command; running that command deploys the Revision, and Healthy
// arrives, each once.
func TestE2E_AwaitingApprovalReachesTheSinkAndItsCommandDeploys(t *testing.T) {
	t.Parallel()
	// The suite's notify-controller trusts the suite's sink.
	key := []byte(harness.SinkKey)
	sink := services.Sink

	ns := namespace(t, "e2e-notify")
	if err := env.Client.Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "audit-webhook"},
		StringData: map[string]string{"url": sink.URL("/kuvryn-sync"), "hmacKey": string(key)},
	}); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(t.Context(), &syncv1.NotificationSink{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "audit"},
		Spec:       syncv1.NotificationSinkSpec{Type: syncv1.SinkWebhook, SecretRef: syncv1.LocalObjectReference{Name: "audit-webhook"}},
	}); err != nil {
		t.Fatal(err)
	}
	repository(t, ns, "platform", map[string]string{"apps/payments/deployment.yaml": deployment("payments", "payments:1.0")})
	if err := env.Client.Create(t.Context(), &syncv1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "payments"},
		Spec: syncv1.ApplicationSpec{
			Source:             syncv1.ApplicationSource{RepositoryRef: syncv1.LocalObjectReference{Name: "platform"}, Path: "apps/payments"},
			ServiceAccountName: "deployer",
			Notifications: []syncv1.NotificationSubscription{{
				SinkRef: syncv1.LocalObjectReference{Name: "audit"},
				Events:  []syncv1.NotificationEvent{syncv1.NotificationAwaitingApproval, syncv1.NotificationHealthy},
			}},
		},
	}); err != nil {
		t.Fatal(err)
	}

	awaiting := waitForNotification(t, sink, "AwaitingApproval", "")
	rev := get(t, &syncv1.Revision{}, ns, awaiting.Revision)
	wantCommand := fmt.Sprintf("ksync approve payments -n %s --revision %s", ns, rev.Name)
	if awaiting.ApproveCommand != wantCommand {
		t.Fatalf("approveCommand %q, want %q", awaiting.ApproveCommand, wantCommand)
	}
	if awaiting.Plan == nil || awaiting.Plan.Digest != rev.Status.Plan.Digest || awaiting.SourceRevision != rev.Status.Source.Commit {
		t.Errorf("notification %+v does not carry the Revision's plan digest %s and commit %s", awaiting, rev.Status.Plan.Digest, rev.Status.Source.Commit)
	}

	args := strings.Fields(awaiting.ApproveCommand)
	out, errOut, err := ksync(t, userKubeconfig(t, "dana", ns), append(args[1:], "--yes")...)
	if err != nil {
		t.Fatalf("%s: %v\n%s%s", awaiting.ApproveCommand, err, out, errOut)
	}
	healthy := waitForNotification(t, sink, "Healthy", rev.Name)
	app := get(t, &syncv1.Application{}, ns, "payments")
	if app.Status.DeployedRevision != healthy.Revision {
		t.Errorf("Healthy names Revision %s, deployed is %s", healthy.Revision, app.Status.DeployedRevision)
	}
	counts := map[string]int{}
	for _, r := range sink.Requests() {
		// The suite shares the sink: count only what was sent to this test's path.
		if r.Path != "/kuvryn-sync" {
			continue
		}
		var n notification
		if err := json.Unmarshal(r.Body, &n); err != nil {
			t.Fatal(err)
		}
		if !r.SignatureOK {
			t.Errorf("%s notification not signed with the key", n.Event)
		}
		counts[n.Event]++
	}
	if counts["AwaitingApproval"] != 1 || counts["Healthy"] != 1 || len(counts) != 2 {
		t.Errorf("sink got %v, want one AwaitingApproval and one Healthy", counts)
	}
}

// waitForNotification waits for the sink to receive event, about rev if set.
func waitForNotification(t *testing.T, sink *harness.Sink, event, rev string) notification {
	t.Helper()
	var found notification
	eventually(t, 3*time.Minute, event+" at the sink", func() bool {
		for _, r := range sink.Requests() {
			var n notification
			if json.Unmarshal(r.Body, &n) == nil && n.Event == event && (rev == "" || n.Revision == rev) {
				found = n
				return true
			}
		}
		return false
	})
	return found
}
