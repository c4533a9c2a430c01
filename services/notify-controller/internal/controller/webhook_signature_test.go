package controller

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/notify-controller/internal/delivery"
	"github.com/kuvryn/kuvryn-sync/services/notify-controller/internal/payload"
)

// TestWebhook_AwaitingApprovalIsSignedAndCarriesTheApproveCommand: a
// webhook sink gets the AwaitingApproval of a manual Application as JSON
// with the Revision, commit, message, plan summary and ksync approve
// command, signed so that both Go's HMAC and `openssl dgst -sha256 -hmac`
// verify it with the key.
func TestWebhook_AwaitingApprovalIsSignedAndCarriesTheApproveCommand(t *testing.T) {
	e := newEnv(t)
	sink := newReceiver(t, 0)
	const key = "s3cr3t-hmac-key"
	e.createSink("audit", syncv1.SinkWebhook, sink.url(), key)
	e.createApplication("api", "audit", syncv1.NotificationAwaitingApproval, syncv1.NotificationHealthy)
	before := deliveries(syncv1.SinkWebhook, delivery.ResultDelivered)
	e.startController(Options{Delivery: testDelivery(sink.roots())})

	e.createRevision("api", "api-1")
	e.setStatus("api-1", awaitingApproval("api-1"))
	e.eventually("one delivery", func() bool { return len(sink.got()) == 1 }, e.explain)
	got := sink.got()[0]

	mac := hmac.New(sha256.New, []byte(key))
	mac.Write(got.body)
	want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	if sig := got.header.Get(payload.SignatureHeader); !hmac.Equal([]byte(sig), []byte(want)) {
		t.Errorf("%s = %q, want %q", payload.SignatureHeader, sig, want)
	}
	bodyFile := filepath.Join(t.TempDir(), "body.json")
	must(t, os.WriteFile(bodyFile, got.body, 0o600))
	out, err := exec.Command("openssl", "dgst", "-sha256", "-hmac", key, "-r", bodyFile).Output()
	if err != nil {
		t.Fatalf("openssl dgst: %v", err)
	}
	if hexSum := strings.Fields(string(out))[0]; "sha256="+hexSum != got.header.Get(payload.SignatureHeader) {
		t.Errorf("openssl computes sha256=%s, header says %s", hexSum, got.header.Get(payload.SignatureHeader))
	}

	var n payload.Notification
	must(t, json.Unmarshal(got.body, &n))
	wantCommand := "ksync approve api -n " + e.ns + " --revision api-1"
	for _, c := range []struct{ field, got, want string }{
		{"event", string(n.Event), "AwaitingApproval"},
		{"application", n.Application.Namespace + "/" + n.Application.Name, e.ns + "/api"},
		{"revision", n.Revision, "api-1"},
		{"sourceRevision", n.SourceRevision, commit},
		{"message", n.Message, "Revision api-1 waits for approval of plan " + plan.Digest},
		{"approveCommand", n.ApproveCommand, wantCommand},
	} {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.field, c.got, c.want)
		}
	}
	if n.Plan == nil || n.Plan.Digest != plan.Digest || n.Plan.Summary != plan.Summary {
		t.Errorf("plan = %+v, want %+v", n.Plan, plan)
	}
	if n.ID == "" || n.Time.IsZero() {
		t.Errorf("id %q, time %v: want both set", n.ID, n.Time)
	}
	if d := deliveries(syncv1.SinkWebhook, delivery.ResultDelivered) - before; d != 1 {
		t.Errorf("delivered counter rose by %v, want 1", d)
	}
}
