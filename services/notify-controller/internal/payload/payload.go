// Package payload renders one notification for each sink type: the signed
// JSON body of webhook sinks and the short text of Slack sinks.
package payload

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// SignatureHeader carries sha256=<hex HMAC-SHA256 of the body with hmacKey>.
const SignatureHeader = "X-Kuvryn-Sync-Signature"

// EventHeader names the event of a webhook delivery, so a receiver can route
// before it parses the body.
const EventHeader = "X-Kuvryn-Sync-Event"

// Notification is one transition of one Application, as every sink gets it.
type Notification struct {
	// ID is the same for every delivery of one transition, so a receiver
	// can drop repeats.
	ID          string                   `json:"id"`
	Event       syncv1.NotificationEvent `json:"event"`
	Application ApplicationRef           `json:"application"`
	Revision    string                   `json:"revision"`
	// SourceRevision is the commit the Revision was rendered from.
	SourceRevision string `json:"sourceRevision,omitempty"`
	Attempt        int32  `json:"attempt,omitempty"`
	Reason         string `json:"reason,omitempty"`
	// Message is the status message that explains the transition, as the
	// sync-controller wrote it: Secret values redacted, bounded.
	Message string `json:"message,omitempty"`
	Plan    *Plan  `json:"plan,omitempty"`
	// ApproveCommand approves exactly this Revision (syncv1.Application.ApproveCommand); AwaitingApproval only.
	ApproveCommand string    `json:"approveCommand,omitempty"`
	Time           time.Time `json:"time"`
}

// ApplicationRef names the Application.
type ApplicationRef struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// Plan is the Revision's plan digest and action counts.
type Plan struct {
	Digest  string             `json:"digest"`
	Summary syncv1.PlanSummary `json:"summary"`
}

// Webhook is the JSON body of a webhook delivery.
func Webhook(n *Notification) ([]byte, error) {
	return json.Marshal(n)
}

// Sign is the value of SignatureHeader for body.
func Sign(body, key []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// Slack is the body of a Slack incoming-webhook delivery: one short line of
// text, and the approve command on its own line.
func Slack(n *Notification) ([]byte, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%s: %s", n.Application.Namespace, n.Application.Name, Headline(n))
	if n.Plan != nil {
		fmt.Fprintf(&b, " (plan: %s)", Summary(n.Plan.Summary))
	}
	if n.ApproveCommand != "" {
		fmt.Fprintf(&b, "\nApprove with: `%s`", n.ApproveCommand)
	}
	return json.Marshal(map[string]string{"text": b.String()})
}

// Headline says what happened in a few words.
func Headline(n *Notification) string {
	rev := "Revision " + n.Revision
	if n.SourceRevision != "" {
		rev += " (commit " + shortCommit(n.SourceRevision) + ")"
	}
	switch n.Event {
	case syncv1.NotificationAwaitingApproval:
		return rev + " is waiting for approval"
	case syncv1.NotificationApplying:
		return fmt.Sprintf("%s is rolling out, attempt %d", rev, n.Attempt)
	case syncv1.NotificationHealthy:
		return rev + " is deployed and Healthy"
	case syncv1.NotificationFailed:
		return fmt.Sprintf("%s failed (%s): %s", rev, n.Reason, n.Message)
	case syncv1.NotificationRolledBack:
		return rev + " is Healthy again after a rollback"
	case syncv1.NotificationDiagnosed:
		return rev + " diagnosed: " + n.Message
	}
	return fmt.Sprintf("%s: %s", rev, n.Event)
}

// Summary is a plan's action counts in words, as ksync prints them.
func Summary(s syncv1.PlanSummary) string {
	return fmt.Sprintf("%d to create, %d to update, %d to delete, %d unchanged", s.Create, s.Update, s.Delete, s.Unchanged)
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}
