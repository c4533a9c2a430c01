// Package revision is the sync-controller's reconciler: for each
// Application it plans the desired Revision, waits for approval when asked
// to, runs pre-sync hooks, applies the sync waves, prunes, runs post-sync
// hooks and assesses health, recording every step in the Revision's status
// so that a restarted controller resumes where the last one stopped.
//
// Reconcile builds a rollout (rollout.go) and runs the phases listed in
// phases, in order. Phase NN of the lifecycle lives in phaseNN_<name>.go,
// so the file list reads as the lifecycle; 13, after assessing health, is
// diagnosis's. Status is recorded at the end of each pass and at the
// checkpoints (checkpoint.go); a Revision fails only through rollout.fail
// (failure.go).
package revision

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/pkg/tracing"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/hook"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/impersonate"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/metrics"
)

const (
	// pollInterval is how soon a rollout waiting for hooks or health looks again.
	pollInterval = 2 * time.Second
	// healthFallback is how soon a rollout waiting for the health of objects
	// whose kinds are all watched looks again anyway: their changes wake it
	// at once, and polling every pollInterval as well was most of the API
	// requests of a large rollout; at 10 s the backstop alone still was
	// half of them (docs/benchmarks.md).
	healthFallback = 30 * time.Second
	// wakeCoalesce is how long the changes of an Application's objects are
	// gathered into one reconcile: a Deployment's controller writes its
	// status several times in a row, and each write woke the rollout.
	wakeCoalesce = time.Second
	// serviceAccountRecheck is how long a service account found to exist is
	// trusted before it is read again: reading it each reconcile was the
	// most frequent request of a large rollout. An account deleted since
	// is refused within this time; until then what the Application may do
	// is still decided by the RoleBindings of its name, as for every
	// impersonated request.
	serviceAccountRecheck = time.Minute
	// shortPoll is how soon a rollout looks again after a step that settles
	// at once: deleting the previous attempt's hooks, or planning a drift
	// correction.
	shortPoll = time.Second
	// dependencyRetry is how soon a rollout waiting for something the user
	// provides (a service account, a desired-state Secret) looks again.
	dependencyRetry = 30 * time.Second
	// revisionApplicationIndex indexes Revisions by spec.applicationName.
	revisionApplicationIndex = "spec.applicationName"
)

// Options configure the reconciler from the manager flags.
type Options struct {
	// DefaultServiceAccount acts for Applications that name none; empty
	// refuses them.
	DefaultServiceAccount string
	// DriftResyncInterval re-plans deployed Applications to find drift and
	// re-checks the health of unhealthy ones; 0 disables it.
	DriftResyncInterval time.Duration
	// RetryInterval is how long an automatic Application waits before it
	// retries a failed attempt, doubled for each further failure in a row;
	// 0 disables retries.
	RetryInterval time.Duration
	// MaxConcurrentReconciles is how many Applications roll out at once.
	MaxConcurrentReconciles int
	// HandEditManagers are the field managers whose fields an automatic
	// Application takes back before it plans: people's edits, not other
	// controllers'. nil means DefaultHandEditManagers.
	HandEditManagers []string
}

// Reconciler rolls Applications out from their desired Revision.
type Reconciler struct {
	// Client reads Revisions through the manager's cache and writes status.
	Client client.Client
	// APIReader reads without a cache: the desired-state Secrets, and an
	// Application or Revision whose cached copy may be older than what was
	// recorded last (fresh_reads.go), since the rollout must resume from that.
	APIReader client.Reader
	Mapper    meta.RESTMapper
	// Clients act as the Applications' service accounts.
	Clients  *impersonate.Clients
	Recorder events.EventRecorder
	Options  Options

	// watches start drift watches; nil until SetupWithManager.
	watches *driftWatches
	// desiredStates keeps verified desired states by digest (desired_cache.go).
	desiredStates desiredCache
	// reads tells which cached Applications and Revisions are fresh.
	reads freshReads
	// accountsSeen maps service accounts (types.NamespacedName) to when they
	// were last found to exist.
	accountsSeen sync.Map
	// applied tells which waves recorded Applying this process applied.
	applied appliedWaves
	// absent tells whether an object is missing from its kind's watch cache,
	// so its plan need not read it (planObject); the drift watches' unless a
	// test sets it first.
	absent func(context.Context, *unstructured.Unstructured) bool
}

// New builds a Reconciler from the manager's clients.
func New(mgr ctrl.Manager, o Options) *Reconciler {
	return &Reconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Mapper:    mgr.GetRESTMapper(),
		Clients:   impersonate.NewClients(mgr.GetConfig(), mgr.GetScheme(), mgr.GetRESTMapper()),
		Recorder:  mgr.GetEventRecorder(syncv1.FieldManagerSync),
		Options:   o,
	}
}

// SetupWithManager watches Applications and their Revisions.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &syncv1.Revision{}, revisionApplicationIndex,
		func(obj client.Object) []string {
			return []string{obj.(*syncv1.Revision).Spec.ApplicationName}
		}); err != nil {
		return fmt.Errorf("indexing Revisions by %s: %w", revisionApplicationIndex, err)
	}
	opts := manager.ControllerOptions()
	opts.MaxConcurrentReconciles = max(1, r.Options.MaxConcurrentReconciles)
	c, err := ctrl.NewControllerManagedBy(mgr).
		Named("application").
		For(&syncv1.Application{}, builder.WithPredicates(applicationChanged())).
		Watches(&syncv1.Revision{}, r.revisionEvents()).
		WithOptions(opts).
		Build(r)
	if err != nil {
		return err
	}
	r.watches = newDriftWatches(c, mgr.GetCache(), r.Options.DriftResyncInterval)
	if r.absent == nil {
		r.absent = r.watches.absent
	}
	return nil
}

// applicationChanged lets through what can change a rollout: the spec,
// annotations (approvals, rollbacks), and the desired Revision the
// source-controller records. The sync-controller's own status writes are
// left out, so they do not wake it again.
func applicationChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			before, okBefore := e.ObjectOld.(*syncv1.Application)
			after, okAfter := e.ObjectNew.(*syncv1.Application)
			if !okBefore || !okAfter {
				return false
			}
			return before.Generation != after.Generation ||
				before.Status.DesiredRevision != after.Status.DesiredRevision ||
				!maps.Equal(before.Annotations, after.Annotations)
		},
		DeleteFunc: func(event.DeleteEvent) bool { return false },
	}
}

// revisionEvents wakes an Application when one of its Revisions is deleted,
// or created after the Application already named it desired. A Revision the
// Application does not name yet changes nothing until status.desiredRevision
// does, which wakes the Application by itself; waking it earlier only made a
// settled Application check the health and drift of every object once more
// before each rollout. Revision updates are ignored: this controller writes
// their status, and their spec never changes.
func (r *Reconciler) revisionEvents() handler.EventHandler {
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			req, ok := applicationOfRevision(e.Object)
			if !ok {
				return
			}
			app := &syncv1.Application{}
			if err := r.Client.Get(ctx, req.NamespacedName, app); err != nil || app.Status.DesiredRevision == e.Object.GetName() {
				q.Add(req)
			}
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if req, ok := applicationOfRevision(e.Object); ok {
				q.Add(req)
			}
		},
	}
}

// applicationOfRevision is the request for the Application obj belongs to.
func applicationOfRevision(obj client.Object) (reconcile.Request, bool) {
	rev, ok := obj.(*syncv1.Revision)
	if !ok {
		return reconcile.Request{}, false
	}
	name := rev.Spec.ApplicationName
	if name == "" {
		name = rev.Labels[syncv1.ApplicationLabel]
	}
	if name == "" {
		return reconcile.Request{}, false
	}
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: rev.Namespace, Name: name}}, true
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
		{name: "plan", run: r.plan},
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
		r.applied.forget(req.NamespacedName)
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
		r.watches.awaitHealth(ro.key(), false)
	}
	if stopped != nil {
		return ctrl.Result{RequeueAfter: stopped.requeueAfter}, nil
	}
	return ctrl.Result{RequeueAfter: r.resyncAfter(ro)}, nil
}

func (r *Reconciler) log(ctx context.Context) logr.Logger {
	return ctrl.LoggerFrom(ctx)
}

// tracerName names the instrumentation library of the reconcile spans.
const tracerName = "github.com/kuvryn/kuvryn-sync/services/sync-controller"

// resyncAfter is when a settled Application is looked at again for drift
// and health.
func (r *Reconciler) resyncAfter(ro *rollout) time.Duration {
	if ro.settled() {
		return r.Options.DriftResyncInterval
	}
	return 0
}
