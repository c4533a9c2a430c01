// Package revision is the sync-controller's reconciler: for each
// Application it plans the desired Revision, waits for approval when asked
// to, runs pre-sync hooks, applies the sync waves, prunes, runs post-sync
// hooks and assesses health, recording every step in the Revision's status
// so that a restarted controller resumes where the last one stopped.
package revision

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/ssa"
	"github.com/kuvryn/kuvryn-sync/pkg/tracing"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/hook"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/impersonate"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/metrics"
)

const (
	// pollInterval is how soon a rollout waiting for hooks or health looks again.
	pollInterval = 2 * time.Second
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
}

// Reconciler rolls Applications out from their desired Revision.
type Reconciler struct {
	// Client reads Revisions through the manager's cache and writes status.
	Client client.Client
	// APIReader reads without a cache: the desired-state Secrets, and the
	// Application and Revision whose status a reconcile writes, since the
	// rollout must resume from what was recorded last, not from a stale copy.
	APIReader client.Reader
	Mapper    meta.RESTMapper
	// Clients act as the Applications' service accounts.
	Clients  *impersonate.Clients
	Recorder events.EventRecorder
	Options  Options

	// watches start drift watches; nil until SetupWithManager.
	watches *driftWatches
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
	c, err := ctrl.NewControllerManagedBy(mgr).
		Named("application").
		For(&syncv1.Application{}, builder.WithPredicates(applicationChanged())).
		Watches(&syncv1.Revision{}, r.revisionEvents()).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(1, r.Options.MaxConcurrentReconciles)}).
		Build(r)
	if err != nil {
		return err
	}
	r.watches = newDriftWatches(c, mgr.GetCache(), r.Options.DriftResyncInterval)
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

// step is what a phase tells the reconcile loop: go on to the next phase,
// or stop this pass, looking again after requeueAfter if it is set.
type step struct {
	next         bool
	requeueAfter time.Duration
}

var (
	proceed = step{next: true}
	halt    = step{}
)

func waitFor(d time.Duration) step { return step{requeueAfter: d} }

// phase is one step of the Revision lifecycle. A phase that has nothing to
// do for the rollout's state returns proceed.
type phase struct {
	name string
	run  func(context.Context, *rollout) (step, error)
}

// phases is the Revision lifecycle, in order.
func (r *Reconciler) phases() []phase {
	return []phase{
		{"plan", r.plan},
		{"awaitApproval", r.awaitApproval},
		{"startRollout", r.startRollout},
		{"preSyncHooks", r.runHooks(hook.PreSync)},
		{"applyWaves", r.applyWaves},
		{"prune", r.prune},
		{"postSyncHooks", r.runHooks(hook.PostSync)},
		{"assessHealth", r.assessHealth},
		{"detectDrift", r.detectDrift},
		{"retry", r.retry},
	}
}

func (r *Reconciler) log(ctx context.Context) logr.Logger {
	return ctrl.LoggerFrom(ctx)
}

// Reconcile moves one Application's desired Revision through its lifecycle.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	started := time.Now()
	ctx, endSpan := tracing.StartReconcile(ctx, tracerName)
	defer func() { endSpan(retErr) }()
	app := &syncv1.Application{}
	if err := r.APIReader.Get(ctx, req.NamespacedName, app); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !app.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	ro := newRollout(app)
	defer func() {
		metrics.ObserveReconcile(ro.metricsState(), retErr != nil, time.Since(started))
	}()

	result, err := r.reconcile(ctx, ro)
	if recErr := r.record(ctx, ro); recErr != nil {
		return ctrl.Result{}, errors.Join(err, recErr)
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.collectGarbage(ctx, ro); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.ensureWatches(ctx, ro); err != nil {
		return ctrl.Result{}, err
	}
	return result, nil
}

func (r *Reconciler) reconcile(ctx context.Context, ro *rollout) (ctrl.Result, error) {
	name, err := r.target(ctx, ro)
	if err != nil || name == "" {
		return ctrl.Result{}, err
	}
	rev := &syncv1.Revision{}
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: ro.app.Namespace, Name: name}, rev); err != nil {
		if apierrors.IsNotFound(err) {
			// The Revision watch brings the Application back once it exists.
			r.log(ctx).Info("desired Revision not found yet", "revision", name)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("reading desired Revision %s/%s: %w", ro.app.Namespace, name, err)
	}
	if rev.Spec.ApplicationName != ro.app.Name {
		return ctrl.Result{}, fmt.Errorf("Revision %s/%s belongs to Application %q, not %q",
			rev.Namespace, rev.Name, rev.Spec.ApplicationName, ro.app.Name)
	}
	ro.setRevision(rev)

	if err := r.supersede(ctx, ro); err != nil {
		return ctrl.Result{}, err
	}
	if ro.app.Status.HeldRevision == rev.Name && ro.beforeRollout() {
		// A rollback holds this Revision until a newer desired state arrives.
		return ctrl.Result{}, nil
	}
	if s, err := r.resolveServiceAccount(ctx, ro); err != nil || !s.next {
		return ctrl.Result{RequeueAfter: s.requeueAfter}, err
	}

	for _, p := range r.phases() {
		s, err := p.run(ctx, ro)
		if recErr := r.record(ctx, ro); recErr != nil {
			return ctrl.Result{}, errors.Join(err, recErr)
		}
		if err != nil {
			return ctrl.Result{}, fmt.Errorf("%s: %w", p.name, err)
		}
		if !s.next {
			return ctrl.Result{RequeueAfter: s.requeueAfter}, nil
		}
	}
	return ctrl.Result{RequeueAfter: r.resyncAfter(ro)}, nil
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

// resolveServiceAccount picks the service account that acts for the
// Application: spec.serviceAccountName, else --default-service-account, in
// the Application's namespace, so that an Application can never borrow
// another namespace's account.
func (r *Reconciler) resolveServiceAccount(ctx context.Context, ro *rollout) (step, error) {
	name := ro.app.Spec.ServiceAccountName
	if name == "" {
		name = r.Options.DefaultServiceAccount
	}
	if name == "" {
		return r.refuse(ro, fmt.Sprintf("Application %s/%s sets no spec.serviceAccountName and the manager runs without "+
			"--default-service-account; set spec.serviceAccountName to the service account that applies it",
			ro.app.Namespace, ro.app.Name)), nil
	}
	sa := types.NamespacedName{Namespace: ro.app.Namespace, Name: name}
	if err := r.APIReader.Get(ctx, sa, &corev1.ServiceAccount{}); err != nil {
		if !apierrors.IsNotFound(err) {
			return halt, fmt.Errorf("reading ServiceAccount %s: %w", sa, err)
		}
		s := r.refuse(ro, fmt.Sprintf("ServiceAccount %s (spec.serviceAccountName or --default-service-account) not found", sa))
		s.requeueAfter = dependencyRetry
		return s, nil
	}
	c, err := r.Clients.For(sa)
	if err != nil {
		return halt, err
	}
	ro.client = c
	return proceed, nil
}

// refuse keeps the desired Revision from rolling out for want of a service account.
func (r *Reconciler) refuse(ro *rollout, message string) step {
	ro.blocked = &failure{reason: syncv1.ReasonServiceAccountMissed, message: message}
	if ro.beforeRollout() {
		if ro.setRevCondition(syncv1.ConditionPlanned, metav1.ConditionFalse, syncv1.ReasonServiceAccountMissed, message) {
			ro.warning(syncv1.ReasonServiceAccountMissed, actionPlan, "%s", message)
		}
	}
	return halt
}

// supersede ends what the previous desired Revision left open: an attempt
// still rolling out, or a plan waiting to start.
func (r *Reconciler) supersede(ctx context.Context, ro *rollout) error {
	h := ro.app.Status.History
	if len(h) > 0 && h[0].Result == syncv1.PhaseApplying && h[0].Revision != ro.rev.Name {
		if err := r.supersedeRevision(ctx, ro, h[0].Revision); err != nil {
			return err
		}
		h[0].Result = syncv1.PhaseSuperseded
		h[0].Reason = syncv1.ReasonSuperseded
		h[0].FinishedAt = ro.now.DeepCopy()
	}
	revs, err := r.revisionsOf(ctx, ro.app)
	if err != nil {
		return err
	}
	for _, rev := range revs {
		switch rev.Status.Phase {
		case syncv1.PhasePlanned, syncv1.PhaseAwaitingApproval, syncv1.PhaseApproved:
			if rev.Name != ro.rev.Name {
				if err := r.supersedeRevision(ctx, ro, rev.Name); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// supersedeRevision marks an earlier Revision Superseded by the desired one.
func (r *Reconciler) supersedeRevision(ctx context.Context, ro *rollout, name string) error {
	old := &syncv1.Revision{}
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: ro.app.Namespace, Name: name}, old); err != nil {
		return client.IgnoreNotFound(err)
	}
	wasRolling := old.Status.Phase == syncv1.PhaseApplying
	switch old.Status.Phase {
	case syncv1.PhaseApplying, syncv1.PhasePlanned, syncv1.PhaseAwaitingApproval, syncv1.PhaseApproved:
	default:
		return nil
	}
	message := fmt.Sprintf("superseded by Revision %s", ro.rev.Name)
	old.Status.Phase = syncv1.PhaseSuperseded
	if wasRolling {
		setCondition(&old.Status.Conditions, old.Generation, syncv1.ConditionRolloutComplete,
			metav1.ConditionFalse, syncv1.ReasonSuperseded, message+" before its rollout completed")
	}
	if meta.IsStatusConditionTrue(old.Status.Conditions, syncv1.ConditionAwaitingApproval) {
		setCondition(&old.Status.Conditions, old.Generation, syncv1.ConditionAwaitingApproval,
			metav1.ConditionFalse, syncv1.ReasonSuperseded, message)
	}
	if err := r.writeRevisionStatus(ctx, old); err != nil {
		return err
	}
	ro.normal(syncv1.ReasonSuperseded, actionRollout, "Revision %s %s", name, message)
	return nil
}

// writeRevisionStatus applies the owned status of a Revision other than the desired one.
func (r *Reconciler) writeRevisionStatus(ctx context.Context, rev *syncv1.Revision) error {
	if err := ssa.ApplyStatus(ctx, r.Client, rev, syncv1.FieldManagerSync, ownedRevisionStatus(rev)); err != nil {
		return fmt.Errorf("recording status of Revision %s/%s: %w", rev.Namespace, rev.Name, err)
	}
	return nil
}
