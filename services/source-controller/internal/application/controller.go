// Package application renders each Application at its Repository's fetched
// commit into a Revision: the rendered objects go, gzip'd, into a
// desired-state Secret owned by the Revision, and the Application's
// status.desiredRevision names it.
package application

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/pkg/retry"
	"github.com/kuvryn/kuvryn-sync/pkg/ssa"
	"github.com/kuvryn/kuvryn-sync/pkg/tracing"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/chart"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/gitrepo"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/repository"
)

// RepositoryRefIndex indexes Applications by spec.source.repositoryRef.name.
const RepositoryRefIndex = ".spec.source.repositoryRef.name"

// Reconciler renders Applications into Revisions.
type Reconciler struct {
	Client client.Client
	// Repositories reads Repositories unstructured, from the manager's
	// cache: see repository.Decode.
	Repositories client.Reader
	// APIReader reads Secrets and ConfigMaps (keys, values, credentials)
	// without caching every Secret in the cluster.
	APIReader client.Reader
	Git       *gitrepo.Cache
	Charts    *chart.Puller
	Events    events.EventRecorder
	Now       func() time.Time
	// Retry spaces out renders after a chart pull failed, up to the
	// Repository's poll interval.
	Retry *retry.Backoff
	// Concurrent is how many Applications are rendered run at once; below 1 means 1.
	Concurrent int

	lastRenders lastRenders
	comparisons comparisons
}

// SetupWithManager renders on Application spec changes and on new commits of
// the Repository they refer to.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if r.Now == nil {
		r.Now = time.Now
	}
	if r.Retry == nil {
		r.Retry = &retry.Backoff{}
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &syncv1.Application{}, RepositoryRefIndex,
		func(o client.Object) []string {
			return []string{o.(*syncv1.Application).Spec.Source.RepositoryRef.Name}
		}); err != nil {
		return err
	}
	opts := manager.ControllerOptions()
	opts.MaxConcurrentReconciles = max(1, r.Concurrent)
	return ctrl.NewControllerManagedBy(mgr).
		WithOptions(opts).
		For(&syncv1.Application{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(repository.Unstructured(), r.rendersOfRepository(),
			builder.WithPredicates(artifactChanged{})).
		Named("application-render").
		Complete(r)
}

// applicationsOf maps a Repository to the Applications that render from it.
func (r *Reconciler) applicationsOf(ctx context.Context, o client.Object) []reconcile.Request {
	apps := r.appsOf(ctx, o)
	reqs := make([]reconcile.Request, 0, len(apps))
	for i := range apps {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&apps[i])})
	}
	return reqs
}

// artifactChanged passes Repository events whose fetched commit changed.
type artifactChanged struct{ predicate.Funcs }

func (artifactChanged) Update(e event.UpdateEvent) bool {
	return fetchedCommit(e.ObjectOld) != fetchedCommit(e.ObjectNew)
}

// tracerName names the instrumentation library of the reconcile spans.
const tracerName = "github.com/kuvryn/kuvryn-sync/services/source-controller"

// status is the part of Application status this controller writes.
type status struct {
	DesiredRevision string             `json:"desiredRevision,omitempty"`
	SourceCommit    string             `json:"sourceCommit,omitempty"`
	Conditions      []metav1.Condition `json:"conditions"`
}

// Reconcile renders the Application at its Repository's commit unless that
// commit and this generation were rendered already.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	ctx, endSpan := tracing.StartReconcile(ctx, tracerName)
	defer func() { endSpan(retErr) }()
	app := &syncv1.Application{}
	if err := r.Client.Get(ctx, req.NamespacedName, app); err != nil {
		if apierrors.IsNotFound(err) {
			r.lastRenders.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if err := r.followShard(ctx, app); err != nil {
		return ctrl.Result{}, err
	}
	repoKey := client.ObjectKey{Namespace: app.Namespace, Name: app.Spec.Source.RepositoryRef.Name}
	repo, err := repository.Get(ctx, r.Repositories, repoKey)
	var specErr *repository.SpecError
	if err != nil && !errors.As(err, &specErr) {
		if client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, r.record(ctx, app, nil, waiting(app, fmt.Sprintf(
			"spec.source.repositoryRef: Repository %q not found in namespace %s", repoKey.Name, app.Namespace)))
	}
	if repo.Status.Artifact == nil {
		return ctrl.Result{}, r.record(ctx, app, nil, waiting(app, fmt.Sprintf("waiting for Repository %q to fetch", repo.Name)))
	}
	commit := repo.Status.Artifact.Commit
	if rendered(app, commit) || r.unchangedBy(ctx, app, gitrepo.RepoKey{Namespace: repo.Namespace, Name: repo.Name}, commit) {
		return ctrl.Result{}, nil
	}

	renderer := &Renderer{APIReader: r.APIReader, Git: r.Git, Charts: r.Charts}
	out, err := renderer.Render(ctx, app, gitrepo.RepoKey{Namespace: repo.Namespace, Name: repo.Name}, commit, false)
	if errors.Is(err, gitrepo.ErrNotFetched) {
		// A cold cache (a restart, a new leader) is not the commit's fault:
		// the Repository's first fetch here brings it in.
		after := r.Retry.Failed(req.String(), repository.PollInterval(repo))
		return ctrl.Result{RequeueAfter: after}, r.record(ctx, app, nil, waiting(app, fmt.Sprintf(
			"waiting for Repository %q to fetch commit %s into this source-controller's cache; retrying in %s", repo.Name, short(commit), after)))
	}
	if err != nil {
		reason, transient := FailureReason(err)
		msg := fmt.Sprintf("commit %s: %s", short(commit), err)
		var result ctrl.Result
		if transient {
			result.RequeueAfter = r.Retry.Failed(req.String(), repository.PollInterval(repo))
			msg = fmt.Sprintf("%s; retrying in %s", msg, result.RequeueAfter)
		}
		r.Events.Eventf(app, nil, corev1.EventTypeWarning, reason, "Render", "%s", ssa.Truncate(msg))
		if result.RequeueAfter > 0 {
			return result, r.record(ctx, app, nil, renderedCondition(app, false, reason, msg))
		}
		// A failure that only a change can heal becomes the desired
		// Revision, so it is seen where deployments are; nothing is applied
		// from it, and the deployed Revision stays.
		failed, err := r.recordRenderFailure(ctx, app, commit, reason, msg)
		if err != nil {
			return ctrl.Result{}, err
		}
		return result, r.record(ctx, app, &status{DesiredRevision: failed.Name, SourceCommit: commit},
			renderedCondition(app, false, reason, msg))
	}
	r.Retry.Succeeded(req.String())
	// A routine render emits no Event, only a log line: a rollout's one
	// Event is its outcome, which the sync-controller sends.
	rev, err := r.ensureRevision(ctx, app, commit, out)
	if err != nil {
		return ctrl.Result{}, err
	}
	msg := fmt.Sprintf("rendered %d objects from commit %s as Revision %s", len(out.Objects), short(commit), rev.Name)
	ctrl.LoggerFrom(ctx).Info("rendered", "commit", commit, "revision", rev.Name, "objects", len(out.Objects))
	if err := r.record(ctx, app, &status{DesiredRevision: rev.Name, SourceCommit: commit},
		renderedCondition(app, true, syncv1.ReasonSucceeded, msg)); err != nil {
		return ctrl.Result{}, err
	}
	r.lastRenders.put(req.NamespacedName, lastRender{generation: app.Generation, commit: commit, checked: commit, revision: rev.Name, inputs: out.Inputs})
	return ctrl.Result{}, nil
}

// rendered reports whether this generation was rendered at commit already.
func rendered(app *syncv1.Application, commit string) bool {
	c := meta.FindStatusCondition(app.Status.Conditions, syncv1.ConditionRendered)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == app.Generation &&
		app.Status.SourceCommit == commit && app.Status.DesiredRevision != ""
}

// record writes the Rendered condition and, after a render or a failure
// recorded as a Revision, the desired Revision. A failure that is retried
// keeps the previous desired Revision.
func (r *Reconciler) record(ctx context.Context, app *syncv1.Application, st *status, c metav1.Condition) error {
	if st == nil {
		st = &status{DesiredRevision: app.Status.DesiredRevision, SourceCommit: app.Status.SourceCommit}
	}
	st.Conditions = ssa.Conditions(app.Status.Conditions, []string{syncv1.ConditionRendered}, c)
	return ssa.ApplyStatus(ctx, r.Client, app, syncv1.FieldManagerSource, st)
}

func waiting(app *syncv1.Application, msg string) metav1.Condition {
	return ssa.Condition(syncv1.ConditionRendered, false, syncv1.ReasonProgressing, msg, app.Generation)
}

func renderedCondition(app *syncv1.Application, ok bool, reason, msg string) metav1.Condition {
	return ssa.Condition(syncv1.ConditionRendered, ok, reason, msg, app.Generation)
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}
