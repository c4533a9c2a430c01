// Package revision is the sync-controller's reconciler: for each
// Application it plans the desired Revision, waits for approval when asked
// to, runs pre-sync hooks, applies the sync waves, prunes, runs post-sync
// hooks and assesses health, recording every step in the Revision's status
// so that a restarted controller resumes where the last one stopped.
//
// Reconcile (lifecycle.go) builds a rollout (rollout.go) and runs the
// phases listed in phases, in order. Phase NN of the lifecycle lives in
// phaseNN_<name>.go, so the file list reads as the lifecycle; what several
// phases share lives in topic files (approval.go, planning.go, live.go,
// ...), the plan itself in package planner, which preview Revisions are
// planned with too, and what the process remembers between passes in
// package memory. Status is recorded at the end of each pass and
// at the checkpoints (checkpoint.go); a Revision fails only through
// rollout.fail (fail.go).
package revision

import (
	"context"
	"maps"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
	"github.com/kuvryn/kuvryn-sync/pkg/eventrecorder"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/impersonate"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/memory"
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
	// recorded last (reads.go), since the rollout must resume from that.
	APIReader client.Reader
	Mapper    meta.RESTMapper
	// Clients act as the Applications' service accounts.
	Clients  *impersonate.Clients
	Recorder events.EventRecorder
	Options  Options

	// The process's memories (package memory): none is a record, each
	// saves requests. watches is nil until SetupWithManager.
	watches       *memory.DriftWatches
	desiredStates memory.DesiredStates
	versions      memory.Versions
	accounts      memory.Accounts
	applied       memory.AppliedWaves
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
		Options:   o,
	}
}

// SetupWithManager watches Applications and their Revisions, and records
// Events while mgr runs.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	rec, err := eventrecorder.New(mgr, syncv1.FieldManagerSync)
	if err != nil {
		return err
	}
	r.Recorder = rec
	if err := manager.IndexRevisionsByApplication(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
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
	r.watches = memory.NewDriftWatches(c, mgr.GetCache(), r.Options.DriftResyncInterval)
	if r.absent == nil {
		r.absent = r.watches.Absent
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
// A preview Revision belongs to none: its creation or deletion changes
// nothing of the Application's rollout (package preview plans it).
func applicationOfRevision(obj client.Object) (reconcile.Request, bool) {
	rev, ok := obj.(*syncv1.Revision)
	if !ok || rev.IsPreview() {
		return reconcile.Request{}, false
	}
	return reconcile.Request{NamespacedName: rev.ApplicationKey()}, true
}

// log is the pass's logger, which names the Application.
func (r *Reconciler) log(ctx context.Context) logr.Logger {
	return ctrl.LoggerFrom(ctx)
}
