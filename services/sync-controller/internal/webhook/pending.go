package webhook

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// pendingRollbacks logs, once at start, every Application with a rollback
// request. A request set while webhooks were disabled carries whatever
// records its author wrote, so an operator turning webhooks back on gets the
// list to check.
type pendingRollbacks struct {
	reader client.Reader
	log    logr.Logger
	// retry is the pause after a failed list; the report is retried until
	// it succeeds or the manager stops, never given up silently.
	retry time.Duration
}

// NeedLeaderElection is false: every replica serves the webhook, so every
// replica reports what it serves under.
func (p *pendingRollbacks) NeedLeaderElection() bool { return false }

// Start implements manager.Runnable.
func (p *pendingRollbacks) Start(ctx context.Context) error {
	for {
		err := p.report(ctx)
		if err == nil {
			return nil
		}
		p.log.Error(err, "listing Applications for pending rollback requests failed; retrying", "retryIn", p.retry.String())
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(p.retry):
		}
	}
}

// pageSize bounds each list request.
const pageSize = 500

func (p *pendingRollbacks) report(ctx context.Context) error {
	var pending []syncv1.Application
	var list syncv1.ApplicationList
	for cont := ""; ; {
		if err := p.reader.List(ctx, &list, client.Limit(pageSize), client.Continue(cont)); err != nil {
			return fmt.Errorf("listing Applications: %w", err)
		}
		for _, app := range list.Items {
			if _, ok := app.Annotations[syncv1.RollbackRequestedAnnotation]; ok {
				pending = append(pending, app)
			}
		}
		if cont = list.Continue; cont == "" {
			break
		}
	}
	for _, app := range pending {
		a := app.Annotations
		p.log.Info("pending rollback request: check that whoever it names was allowed to request it",
			"application", app.Namespace+"/"+app.Name,
			"revision", a[syncv1.RollbackRequestedAnnotation],
			"requestedBy", a[syncv1.RollbackRequestedByAnnotation],
			"requestedAt", a[syncv1.RollbackRequestedAtAnnotation],
			"desiredState", a[syncv1.RollbackDesiredStateAnnotation])
	}
	return nil
}
