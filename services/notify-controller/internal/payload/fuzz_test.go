package payload

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// FuzzPayload_BodiesStayValidJSONWhateverTheStatusSays: the fields of a
// notification come from objects anyone with write access may fill (names,
// reasons, status messages); whatever they hold, the webhook body is JSON
// that decodes back to the same notification, and the Slack body is JSON
// whose text carries the Application and the approve command unchanged.
func FuzzPayload_BodiesStayValidJSONWhateverTheStatusSays(f *testing.F) {
	f.Add("payments", "api", "api-1", "0123456789abcdef", "HookFailed", "pre-sync hook migrate failed", "ksync approve api -n payments --revision api-1", string(syncv1.NotificationFailed))
	f.Add("ns", "a\"b", "r\n`x`", "", "", "\x00\u2028<script>", "`; rm -rf /", string(syncv1.NotificationAwaitingApproval))
	f.Add("", "", "", "short", "", "", "", "Unknown")
	f.Fuzz(func(t *testing.T, namespace, name, revision, commit, reason, message, approve, event string) {
		for _, s := range []string{namespace, name, revision, commit, reason, message, approve, event} {
			if !utf8.ValidString(s) {
				// JSON carries text: invalid UTF-8 is replaced, not kept, so
				// it cannot round-trip and is no input the API server stores.
				t.Skip()
			}
		}
		n := &Notification{ID: "id", Event: syncv1.NotificationEvent(event),
			Application: ApplicationRef{Namespace: namespace, Name: name}, Revision: revision,
			SourceRevision: commit, Reason: reason, Message: message, ApproveCommand: approve}
		body, err := Webhook(n)
		if err != nil {
			t.Fatalf("Webhook: %v", err)
		}
		var back Notification
		if err := json.Unmarshal(body, &back); err != nil {
			t.Fatalf("webhook body %q is not JSON: %v", body, err)
		}
		if back.Application != n.Application || back.Revision != revision || back.Message != message ||
			back.ApproveCommand != approve || back.Event != n.Event {
			t.Errorf("webhook body decodes to %+v, want %+v", back, *n)
		}
		slack, err := Slack(n)
		if err != nil {
			t.Fatalf("Slack: %v", err)
		}
		var text map[string]string
		if err := json.Unmarshal(slack, &text); err != nil {
			t.Fatalf("Slack body %q is not JSON: %v", slack, err)
		}
		if !strings.HasPrefix(text["text"], namespace+"/"+name+": ") {
			t.Errorf("Slack text %q does not start with the Application", text["text"])
		}
		if approve != "" && !strings.HasSuffix(text["text"], "\nApprove with: `"+approve+"`") {
			t.Errorf("Slack text %q does not end with the approve command", text["text"])
		}
	})
}
