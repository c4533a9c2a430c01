// Package repository reconciles Repositories: fetch the followed revision
// into the source cache, then discover the Applications its .ksync.yaml
// files declare.
package repository

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/pkg/retry"
	"github.com/kuvryn/kuvryn-sync/pkg/ssa"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/gitrepo"
)

// DefaultPollInterval applies when a Repository sets none.
const DefaultPollInterval = time.Minute

// conditionTypes are the Repository conditions the source-controller owns.
var conditionTypes = []string{syncv1.ConditionReady, syncv1.ConditionFetched, syncv1.ConditionApplicationsDiscovered}

// Reconciler fetches Repositories and discovers their Applications.
type Reconciler struct {
	Client client.Client
	// Repositories reads Repositories unstructured, from the manager's
	// cache: see Decode.
	Repositories client.Reader
	// APIReader reads credential Secrets without caching every Secret.
	APIReader client.Reader
	Git       *gitrepo.Cache
	Events    events.EventRecorder
	Now       func() time.Time
	// Retry spaces out fetches after a failure, up to the poll interval.
	Retry *retry.Backoff
	// Concurrent is how many Repositories are fetched run at once; below 1 means 1.
	Concurrent int
	// Previews keeps status.previews and the preview Revisions after each
	// fetch; nil leaves previews alone.
	Previews Previewer
}

// Previewer keeps a Repository's previews (package preview): it reads the
// preview requests and lists the branches spec.previews asks for, renders
// them against tracked, the commit just fetched, and returns
// status.previews and how soon it needs to look again (zero: at the next
// poll).
type Previewer interface {
	Previews(ctx context.Context, repo *syncv1.Repository, auth *gitrepo.Auth, tracked string) ([]syncv1.PreviewStatus, time.Duration)
}

// SetupWithManager watches Repositories for spec changes and for the
// reconcile-requested-at annotation the push webhook receiver stamps.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Now == nil {
		r.Now = time.Now
	}
	if r.Retry == nil {
		r.Retry = &retry.Backoff{}
	}
	opts := manager.ControllerOptions()
	opts.MaxConcurrentReconciles = max(1, r.Concurrent)
	return ctrl.NewControllerManagedBy(mgr).
		WithOptions(opts).
		For(Unstructured(), builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{},
			// A new shard label moves the discovered Applications with it.
			predicate.LabelChangedPredicate{}))).
		// A discovered Application deleted by hand is applied again.
		Owns(&syncv1.Application{}, builder.WithPredicates(predicate.Funcs{
			CreateFunc: func(event.CreateEvent) bool { return false },
			UpdateFunc: func(event.UpdateEvent) bool { return false },
		})).
		Named("repository").
		Complete(r)
}

// status is the part of Repository status this controller writes.
type status struct {
	ObservedGeneration     int64              `json:"observedGeneration"`
	Conditions             []metav1.Condition `json:"conditions"`
	Artifact               *syncv1.Artifact   `json:"artifact,omitempty"`
	LastHandledReconcileAt string             `json:"lastHandledReconcileAt,omitempty"`
	DiscoveredApplications int32              `json:"discoveredApplications"`
	// Previews is carried over unchanged whenever no fetch succeeded.
	Previews []syncv1.PreviewStatus `json:"previews,omitempty"`
}

// Reconcile fetches, discovers and records the outcome in status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	repo, err := Get(ctx, r.Repositories, req.NamespacedName)
	var specErr *SpecError
	if errors.As(err, &specErr) {
		return ctrl.Result{}, r.refuse(ctx, repo, specErr)
	}
	if err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	st := status{
		ObservedGeneration:     repo.Generation,
		Artifact:               repo.Status.Artifact,
		LastHandledReconcileAt: repo.Annotations[syncv1.ReconcileRequestedAtAnnotation],
		DiscoveredApplications: repo.Status.DiscoveredApplications,
		Previews:               repo.Status.Previews,
	}
	var updates []metav1.Condition
	fetchedBefore := ""
	if repo.Status.Artifact != nil {
		fetchedBefore = repo.Status.Artifact.Commit
	}

	next := PollInterval(repo)
	retryKey := req.String()
	auth, fetchErr := r.auth(ctx, repo)
	if fetchErr == nil {
		fetchErr = r.fetch(ctx, repo, auth, &st)
	}
	if fetchErr != nil {
		reason := syncv1.ReasonFetchFailed
		if errors.Is(fetchErr, gitrepo.ErrCredentialsRefused) {
			reason = syncv1.ReasonCredentialsRefused
		}
		// A Git server that is down, or a credentials Secret not created
		// yet, heals without a spec change: try again soon, then less often.
		next = r.Retry.Failed(retryKey, next)
		msg := fmt.Sprintf("%s; retrying in %s", fetchErr, next)
		updates = append(updates,
			ssa.Condition(syncv1.ConditionFetched, false, reason, msg, repo.Generation),
			ssa.Condition(syncv1.ConditionReady, false, reason, msg, repo.Generation))
		r.Events.Eventf(repo, nil, corev1.EventTypeWarning, reason, "Fetch", "%s", ssa.Truncate(msg))
	} else {
		r.Retry.Succeeded(retryKey)
		msg := fmt.Sprintf("fetched %s at %s", st.Artifact.Revision, st.Artifact.Commit)
		updates = append(updates, ssa.Condition(syncv1.ConditionFetched, true, syncv1.ReasonSucceeded, msg, repo.Generation))
		n, err := r.discover(ctx, repo, st.Artifact.Commit, fetchedBefore)
		if err != nil {
			updates = append(updates,
				ssa.Condition(syncv1.ConditionApplicationsDiscovered, false, syncv1.ReasonDiscoveryFailed, err.Error(), repo.Generation),
				ssa.Condition(syncv1.ConditionReady, false, syncv1.ReasonDiscoveryFailed, err.Error(), repo.Generation))
			r.Events.Eventf(repo, nil, corev1.EventTypeWarning, syncv1.ReasonDiscoveryFailed, "Discover", "%s", ssa.Truncate(err.Error()))
		} else {
			st.DiscoveredApplications = n
			updates = append(updates,
				ssa.Condition(syncv1.ConditionApplicationsDiscovered, true, syncv1.ReasonSucceeded, fmt.Sprintf("%d Applications declared", n), repo.Generation),
				ssa.Condition(syncv1.ConditionReady, true, syncv1.ReasonSucceeded, msg, repo.Generation))
		}
		if r.Previews != nil {
			var after time.Duration
			st.Previews, after = r.Previews.Previews(ctx, repo, auth, st.Artifact.Commit)
			if after > 0 && after < next {
				next = after
			}
		}
	}
	st.Conditions = ssa.Conditions(repo.Status.Conditions, conditionTypes, updates...)
	if err := ssa.ApplyStatus(ctx, r.Client, repo, syncv1.FieldManagerSource, st); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: next}, nil
}

// refuse records a spec that does not decode, without fetching: the
// Repository waits for a corrected spec, which wakes it again.
func (r *Reconciler) refuse(ctx context.Context, repo *syncv1.Repository, specErr *SpecError) error {
	msg := specErr.Error()
	st := status{
		ObservedGeneration:     repo.Generation,
		Artifact:               repo.Status.Artifact,
		LastHandledReconcileAt: repo.Status.LastHandledReconcileAt,
		DiscoveredApplications: repo.Status.DiscoveredApplications,
		Previews:               repo.Status.Previews,
		Conditions: ssa.Conditions(repo.Status.Conditions, conditionTypes,
			ssa.Condition(syncv1.ConditionFetched, false, syncv1.ReasonValidationFailure, msg, repo.Generation),
			ssa.Condition(syncv1.ConditionReady, false, syncv1.ReasonValidationFailure, msg, repo.Generation)),
	}
	r.Events.Eventf(repo, nil, corev1.EventTypeWarning, syncv1.ReasonValidationFailure, "Fetch", "%s", ssa.Truncate(msg))
	return ssa.ApplyStatus(ctx, r.Client, repo, syncv1.FieldManagerSource, st)
}

// auth reads the Repository's Git credentials; nil when it names none.
func (r *Reconciler) auth(ctx context.Context, repo *syncv1.Repository) (*gitrepo.Auth, error) {
	ref := repo.Spec.Git.SecretRef
	if ref == nil {
		return nil, nil
	}
	secret := &corev1.Secret{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: repo.Namespace, Name: ref.Name}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("Repository %s/%s: spec.git.secretRef: Secret %q not found: %w", repo.Namespace, repo.Name, ref.Name, gitrepo.ErrCredentialsRefused)
		}
		return nil, err
	}
	a, err := gitrepo.AuthFromSecret(secret)
	if err != nil {
		return nil, fmt.Errorf("Repository %s/%s: spec.git.secretRef: %w", repo.Namespace, repo.Name, err)
	}
	return a, nil
}

// fetch brings the clone up to date and records the resolved commit. The
// artifact's fetchedAt moves only when the commit does, so polling an
// unchanged branch writes nothing.
func (r *Reconciler) fetch(ctx context.Context, repo *syncv1.Repository, auth *gitrepo.Auth, st *status) error {
	revision := repo.Spec.Git.Revision
	if revision == "" {
		revision = gitrepo.DefaultRevision
	}
	key := gitrepo.RepoKey{Namespace: repo.Namespace, Name: repo.Name}
	res, err := r.Git.Fetch(ctx, key, repo.Spec.Git.URL, auth, revision)
	if err != nil {
		return err
	}
	if st.Artifact == nil || st.Artifact.Commit != res.Commit || st.Artifact.Revision != res.Ref {
		st.Artifact = &syncv1.Artifact{Revision: res.Ref, Commit: res.Commit, FetchedAt: metav1.NewTime(r.Now())}
		log.FromContext(ctx).Info("fetched new commit", "revision", res.Ref, "commit", res.Commit)
	}
	return nil
}

// PollInterval is how often repo is fetched, and the longest wait before a
// retry of work that failed on it.
func PollInterval(repo *syncv1.Repository) time.Duration {
	if repo.Spec.PollInterval == nil || repo.Spec.PollInterval.Duration <= 0 {
		return DefaultPollInterval
	}
	return max(repo.Spec.PollInterval.Duration, MinPollInterval)
}
