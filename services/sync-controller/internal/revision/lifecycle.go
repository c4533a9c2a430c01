package revision

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kuvryn/kuvryn-sync/pkg/tracing"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/hook"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/metrics"
)

// phase is one step of the Revision lifecycle. A phase that has nothing to
// do for the rollout's state returns proceed.
type phase struct {
	name string
	run  func(context.Context, *rollout) (step, error)
	// always runs the phase even after an earlier one stopped the pass: it
	// tidies around the Application instead of moving its rollout on.
	always bool
}

// phases is the lifecycle of one reconcile, in order, from resolving the
// Revision to work on to ensuring the drift watches. A phase that has
// nothing to do for the rollout's state proceeds; the first one that stops
// the pass decides when to look again, and only the phases marked always
// run after it.
func (r *Reconciler) phases() []phase {
	return []phase{
		{name: "resolveTarget", run: r.resolveTarget},
		{name: "supersede", run: r.supersede},
		{name: "holdRollback", run: r.holdRollback},
		{name: "resolveServiceAccount", run: r.resolveServiceAccount},
		{name: "plan", run: r.planRevision},
		{name: "awaitApproval", run: r.awaitApproval},
		{name: "startRollout", run: r.startRollout},
		{name: "preSyncHooks", run: r.runHooks(hook.PreSync)},
		{name: "applyWaves", run: r.applyWaves},
		{name: "prune", run: r.prune},
		{name: "postSyncHooks", run: r.runHooks(hook.PostSync)},
		{name: "assessHealth", run: r.assessHealth},
		// diagnose reads the health assessHealth just recorded, before
		// drift and retry act on it.
		{name: "diagnose", run: r.diagnose},
		{name: "detectDrift", run: r.detectDrift},
		{name: "retry", run: r.retry},
		{name: "collectGarbage", run: r.collectGarbage, always: true},
		{name: "ensureWatches", run: r.ensureWatches, always: true},
	}
}

// Reconcile moves one Application's desired Revision through its lifecycle.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	started := time.Now()
	ctx, endSpan := tracing.StartReconcile(ctx, tracerName)
	defer func() { endSpan(retErr) }()
	app, err := r.readApplication(ctx, req.NamespacedName)
	if apierrors.IsNotFound(err) {
		r.applied.Forget(req.NamespacedName)
		return ctrl.Result{}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if !app.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	ro := newRollout(app)
	defer func() {
		metrics.ObserveReconcile(ro.metricsState(), retErr != nil, time.Since(started))
	}()
	return r.run(ctx, ro)
}

// run runs the phases over ro and records status once at the end of the
// pass, when a phase fails, and at the checkpoints the phases take before
// steps a restarted controller must know about (checkpoint.go).
// Every other phase is safe to run again from the previous record, so
// writing after each of them only cost the API server: a status write per
// phase was most of a rollout's load (docs/benchmarks.md). An error ends the
// pass at once; the controller retries it with backoff.
func (r *Reconciler) run(ctx context.Context, ro *rollout) (ctrl.Result, error) {
	var stopped *step
	for _, p := range r.phases() {
		if stopped != nil && !p.always {
			continue
		}
		s, err := p.run(ctx, ro)
		if err != nil {
			if recErr := r.record(ctx, ro); recErr != nil {
				return ctrl.Result{}, errors.Join(err, recErr)
			}
		}
		if err != nil {
			return ctrl.Result{}, fmt.Errorf("%s: %w", p.name, err)
		}
		if stopped == nil && !s.next {
			stopped = &s
		}
	}
	if err := r.record(ctx, ro); err != nil {
		return ctrl.Result{}, err
	}
	if !ro.awaitingHealth && r.watches != nil {
		r.watches.AwaitHealth(ro.key(), false)
	}
	if stopped != nil {
		return ctrl.Result{RequeueAfter: stopped.requeueAfter}, nil
	}
	return ctrl.Result{RequeueAfter: r.resyncAfter(ro)}, nil
}

// resyncAfter is when a settled Application is looked at again for drift
// and health.
func (r *Reconciler) resyncAfter(ro *rollout) time.Duration {
	if ro.settled() {
		return r.Options.DriftResyncInterval
	}
	return 0
}

// tracerName names the instrumentation library of the reconcile spans.
const tracerName = "github.com/kuvryn/kuvryn-sync/services/sync-controller"
