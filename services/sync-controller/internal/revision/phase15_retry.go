package revision

import (
	"context"
	"time"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// maxRetryBackoff caps the wait between attempts at a failing Revision.
const maxRetryBackoff = 10 * time.Minute

// retry starts another attempt at a desired Revision whose last attempt
// failed, as a Flux user expects a failed Kustomization to be retried and
// an Argo CD user an automated sync with backoff: an automatic Application
// retries once --retry-interval, doubled for each further failed attempt
// in a row and capped at ten minutes, has passed since the failure; a
// manual one when a fresh approval of the Revision arrives. The attempt is
// planned afresh, so a manual Application's approval is checked against
// current live state, and it resumes where the failed one stopped:
// startRollout keeps the hooks that succeeded. A desired state that failed
// validation never changes, so it is not retried.
func (r *Reconciler) retry(_ context.Context, ro *rollout) (step, error) {
	if !ro.settled() || ro.Rev.Status.Phase != syncv1.PhaseFailed || ro.rollback != nil {
		return proceed, nil
	}
	last := ro.App.Status.History[0]
	if last.Reason == syncv1.ReasonValidationFailure {
		return proceed, nil
	}
	if !ro.App.Spec.Sync.Automatic {
		if !ro.approvalPending() {
			return proceed, nil
		}
	} else {
		backoff := r.retryBackoff(ro)
		if backoff <= 0 {
			return proceed, nil
		}
		if last.FinishedAt != nil {
			if wait := backoff - ro.Now.Sub(last.FinishedAt.Time); wait > 0 {
				return waitFor(wait), nil
			}
		}
	}
	// plan sees a Revision before its rollout and plans it again.
	ro.Rev.Status.Phase = syncv1.PhasePlanned
	ro.Rev.Status.Plan = nil
	ro.normal(syncv1.ReasonProgressing, actionRollout, "retrying Revision %s: attempt %d failed with %s",
		ro.Rev.Name, ro.Rev.Status.Attempt, last.Reason)
	return waitFor(shortPoll), nil
}

// retryBackoff is how long after a failed attempt an automatic Application
// tries again: --retry-interval doubled for every earlier failed attempt at
// the same Revision in a row; 0 when retries are off.
func (r *Reconciler) retryBackoff(ro *rollout) time.Duration {
	backoff := r.Options.RetryInterval
	if backoff <= 0 {
		return 0
	}
	for _, h := range ro.App.Status.History[1:] {
		if h.Revision != ro.Rev.Name || h.Result != syncv1.PhaseFailed || backoff >= maxRetryBackoff {
			break
		}
		backoff *= 2
	}
	return min(backoff, maxRetryBackoff)
}
