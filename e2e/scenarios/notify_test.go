package scenarios_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
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
	// The suite's notify-controller trusts the suite's sink, which the
	// suite shares: a path of its own tells this test's requests apart.
	const path = "/kuvryn-sync"
	ns := namespace(t, "e2e-notify")
	subscribe(t, ns, path)
	repository(t, ns, "platform", map[string]string{"apps/payments/deployment.yaml": deployment("payments", "payments:1.0")})
	createNotifiedApplication(t, ns)

	awaiting := waitForNotification(t, path, "AwaitingApproval", "")
	rev := get(t, &syncv1.Revision{}, ns, awaiting.Revision)
	wantCommand := fmt.Sprintf("ksync approve payments -n %s --revision %s", ns, rev.Name)
	if awaiting.ApproveCommand != wantCommand {
		t.Fatalf("approveCommand %q, want %q", awaiting.ApproveCommand, wantCommand)
	}
	if awaiting.Plan == nil || awaiting.Plan.Digest != rev.Status.Plan.Digest || awaiting.SourceRevision != rev.Spec.Source.Commit {
		t.Errorf("notification %+v does not carry the Revision's plan digest %s and commit %s", awaiting, rev.Status.Plan.Digest, rev.Spec.Source.Commit)
	}

	args := strings.Fields(awaiting.ApproveCommand)
	out, errOut, err := ksync(t, userKubeconfig(t, "dana", ns), append(args[1:], "--yes")...)
	if err != nil {
		t.Fatalf("%s: %v\n%s%s", awaiting.ApproveCommand, err, out, errOut)
	}
	healthy := waitForNotification(t, path, "Healthy", rev.Name)
	app := get(t, &syncv1.Application{}, ns, "payments")
	if app.Status.DeployedRevision != healthy.Revision {
		t.Errorf("Healthy names Revision %s, deployed is %s", healthy.Revision, app.Status.DeployedRevision)
	}
	if got := strings.Join(received(t, path), ","); got != "AwaitingApproval,Healthy" {
		t.Errorf("sink got %s, want one AwaitingApproval and one Healthy", got)
	}
}

// waitForNotification waits for the sink to receive event at path, about
// rev if set.
func waitForNotification(t *testing.T, path, event, rev string) notification {
	t.Helper()
	var found notification
	eventually(t, 3*time.Minute, event+" at the sink's "+path, func() bool {
		for _, n := range receivedNotifications(t, path) {
			if n.Event == event && (rev == "" || n.Revision == rev) {
				found = n
				return true
			}
		}
		return false
	})
	return found
}
