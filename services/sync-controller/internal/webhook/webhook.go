// Package webhook is the sync-controller's admission webhook for
// Applications. It turns the approval and rollback annotations a person sets
// into records of who asked, when, and for which plan or desired state, taken
// from the authenticated request, so nobody can approve in someone else's
// name or for a plan they did not review. See docs/approvals.md.
package webhook

import (
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	kmanager "github.com/kuvryn/kuvryn-sync/pkg/manager"
)

// Paths the webhook server serves; deploy/webhook points the API server at them.
const (
	MutatePath   = "/mutate-application"
	ValidatePath = "/validate-application"
)

// Setup registers the mutating and validating webhooks on the manager's
// webhook server, a readiness check that passes once it serves, and a
// start-up report of pending rollback requests. apiReader must not be a
// cache: an approval is checked against the Revision's plan as it is now.
//
// With ENABLE_WEBHOOKS=false it registers nothing and says, once, that
// approvals and rollback requests go unverified.
func Setup(mgr manager.Manager, apiReader client.Reader) error {
	log := mgr.GetLogger().WithName("approval-webhook")
	if !kmanager.WebhooksEnabled() {
		log.Info("admission webhooks disabled (ENABLE_WEBHOOKS=false): approvals and rollback requests are unverified, and anyone who can update an Application can forge them")
		return nil
	}
	decoder := admission.NewDecoder(mgr.GetScheme())
	server := mgr.GetWebhookServer()
	server.Register(MutatePath, &admission.Webhook{Handler: &Mutator{Reader: apiReader, Decoder: decoder, Now: time.Now}})
	server.Register(ValidatePath, &admission.Webhook{Handler: &Validator{Decoder: decoder}})
	if err := mgr.AddReadyzCheck("webhook", server.StartedChecker()); err != nil {
		return fmt.Errorf("adding the webhook readiness check: %w", err)
	}
	return mgr.Add(&pendingRollbacks{reader: apiReader, log: log, retry: 10 * time.Second})
}
