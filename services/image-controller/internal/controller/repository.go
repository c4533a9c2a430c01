package controller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
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
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/pkg/retry"
	"github.com/kuvryn/kuvryn-sync/pkg/ssa"
	"github.com/kuvryn/kuvryn-sync/services/image-controller/internal/setters"
	"github.com/kuvryn/kuvryn-sync/services/image-controller/internal/writeback"
)

const (
	// WriteBackFlag turns image write-back on or off.
	WriteBackFlag = "image-write-back"
	// maxPushRetry bounds the wait before refused push credentials (Secrets
	// are not watched) or a failed push are tried again.
	maxPushRetry = 5 * time.Minute
	// maxRefusedListed bounds the markers a condition message lists.
	maxRefusedListed = 10
)

var fullCommit = regexp.MustCompile(`^[0-9a-f]{40}$`)

// RepositoryReconciler commits the images selected by the ImagePolicies of
// a Repository's namespace into its Git branch.
type RepositoryReconciler struct {
	Client client.Client
	// APIReader reads push credential Secrets without caching every Secret.
	APIReader client.Reader
	Writer    *writeback.Writer
	// WriteBack false reports ImagesUpdated False, reason Disabled.
	WriteBack bool
	Events    events.EventRecorder
	// Retry spaces out write-backs after a failure that may heal by itself
	// (a Git server that is down, a Secret not created yet); nil means the
	// default backoff.
	Retry *retry.Backoff
}

// SetupWithManager reconciles a Repository when its spec changes and when
// an ImagePolicy of its namespace selects a different image; status writes
// (the source-controller's fetches included) never re-read the markers.
func (r *RepositoryReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Retry == nil {
		r.Retry = &retry.Backoff{}
	}
	return ctrl.NewControllerManagedBy(mgr).
		WithOptions(manager.ControllerOptions()).
		For(&syncv1.Repository{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&syncv1.ImagePolicy{}, handler.EnqueueRequestsFromMapFunc(r.repositoriesOf),
			builder.WithPredicates(predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
				return e.ObjectOld.(*syncv1.ImagePolicy).Status.LatestImage != e.ObjectNew.(*syncv1.ImagePolicy).Status.LatestImage
			}})).
		Named("repository-image-update").
		Complete(r)
}

func (r *RepositoryReconciler) repositoriesOf(ctx context.Context, obj client.Object) []reconcile.Request {
	var repos syncv1.RepositoryList
	if err := r.Client.List(ctx, &repos, client.InNamespace(obj.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing Repositories for an ImagePolicy change", "namespace", obj.GetNamespace())
		return nil
	}
	var out []reconcile.Request
	for _, repo := range repos.Items {
		if repo.Spec.ImageUpdate != nil {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&repo)})
		}
	}
	return out
}

// repositoryStatus is the part of Repository status this controller owns.
type repositoryStatus struct {
	Conditions  []metav1.Condition        `json:"conditions,omitempty"`
	ImageUpdate *syncv1.ImageUpdateStatus `json:"imageUpdate,omitempty"`
}

// Reconcile writes back once, unless nothing it depends on changed since
// the last successful write-back.
func (r *RepositoryReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var repo syncv1.Repository
	if err := r.Client.Get(ctx, req.NamespacedName, &repo); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if repo.Spec.ImageUpdate == nil {
		// Release ImagesUpdated and status.imageUpdate if this controller wrote them.
		if meta.FindStatusCondition(repo.Status.Conditions, syncv1.ConditionImagesUpdated) == nil && repo.Status.ImageUpdate == nil {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, r.apply(ctx, &repo, repositoryStatus{})
	}
	st := repositoryStatus{ImageUpdate: repo.Status.ImageUpdate}
	if !r.WriteBack {
		st.Conditions = r.conditions(&repo, false, syncv1.ReasonDisabled,
			fmt.Sprintf("image write-back is off: the image-controller runs with --%s=false", WriteBackFlag))
		return ctrl.Result{}, r.apply(ctx, &repo, st)
	}

	images, err := r.selectedImages(ctx, repo.Namespace)
	if err != nil {
		return ctrl.Result{}, err
	}
	fingerprint := observed(repo.Generation, images)
	if cond := meta.FindStatusCondition(repo.Status.Conditions, syncv1.ConditionImagesUpdated); cond != nil &&
		cond.Status == metav1.ConditionTrue && repo.Status.ImageUpdate != nil && repo.Status.ImageUpdate.ObservedImages == fingerprint {
		return ctrl.Result{}, nil
	}

	id := "Repository " + req.String()
	writeReq, reason, err := r.request(ctx, &repo, images)
	if err != nil {
		if reason != syncv1.ReasonCredentialsRefused {
			// Only a spec change can fix it, and a spec change reconciles.
			st.Conditions = r.conditions(&repo, false, reason, fmt.Sprintf("%s: %v", id, err))
			return ctrl.Result{}, r.apply(ctx, &repo, st)
		}
		return r.retryLater(ctx, &repo, st, reason, fmt.Sprintf("%s: %v", id, err))
	}

	out, err := r.Writer.Update(ctx, writeReq)
	if err != nil {
		r.Events.Eventf(&repo, nil, corev1.EventTypeWarning, syncv1.ReasonPushFailed, "ImageUpdate", "%s", ssa.Truncate(err.Error()))
		return r.retryLater(ctx, &repo, st, syncv1.ReasonPushFailed, fmt.Sprintf("%s: %v", id, err))
	}
	r.Retry.Succeeded(req.String())

	st.ImageUpdate = &syncv1.ImageUpdateStatus{ObservedImages: fingerprint}
	if prev := repo.Status.ImageUpdate; prev != nil {
		st.ImageUpdate.LastPushCommit, st.ImageUpdate.LastPushTime = prev.LastPushCommit, prev.LastPushTime
	}
	msg := fmt.Sprintf("markers under %q on branch %s already name the selected images (commit %s)", writeReq.Path, writeReq.Branch, short(out.Head))
	if out.Commit != "" {
		now := metav1.Now()
		st.ImageUpdate.LastPushCommit, st.ImageUpdate.LastPushTime = out.Commit, &now
		msg = fmt.Sprintf("pushed %s to branch %s: %s", short(out.Commit), writeReq.Branch, updates(out.Updated))
		r.Events.Eventf(&repo, nil, corev1.EventTypeNormal, syncv1.ReasonSucceeded, "ImageUpdate", "%s", ssa.Truncate(msg))
	}
	if len(out.Refused) > 0 {
		st.Conditions = r.conditions(&repo, false, syncv1.ReasonRefused, refusedMessage(id, repo.Namespace, out.Refused, msg))
		r.Events.Eventf(&repo, nil, corev1.EventTypeWarning, syncv1.ReasonRefused, "ImageUpdate", "%s", st.Conditions[0].Message)
	} else {
		st.Conditions = r.conditions(&repo, true, syncv1.ReasonSucceeded, msg)
	}
	return ctrl.Result{}, r.apply(ctx, &repo, st)
}

// retryLater records a failure that may heal by itself and asks to try
// again soon, then less often, saying when in the condition.
func (r *RepositoryReconciler) retryLater(ctx context.Context, repo *syncv1.Repository, st repositoryStatus, reason, msg string) (ctrl.Result, error) {
	after := r.Retry.Failed(client.ObjectKeyFromObject(repo).String(), maxPushRetry)
	st.Conditions = r.conditions(repo, false, reason, fmt.Sprintf("%s; retrying in %s", msg, after))
	return ctrl.Result{RequeueAfter: after}, r.apply(ctx, repo, st)
}

// request builds the write-back request; reason classifies a failure.
func (r *RepositoryReconciler) request(ctx context.Context, repo *syncv1.Repository, images map[string]setters.Image) (writeback.Request, string, error) {
	spec := repo.Spec.ImageUpdate
	branch := spec.Branch
	if branch == "" {
		branch = strings.TrimPrefix(repo.Spec.Git.Revision, "refs/heads/")
		if branch == "" {
			branch = "main"
		}
		if strings.HasPrefix(branch, "refs/") || fullCommit.MatchString(branch) {
			return writeback.Request{}, syncv1.ReasonValidationFailure,
				fmt.Errorf("spec.imageUpdate.branch must be set: spec.git.revision %q is not a branch", repo.Spec.Git.Revision)
		}
	}
	var secret corev1.Secret
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: repo.Namespace, Name: spec.SecretRef.Name}, &secret)
	switch {
	case apierrors.IsNotFound(err):
		return writeback.Request{}, syncv1.ReasonCredentialsRefused,
			fmt.Errorf("spec.imageUpdate.secretRef: Secret %s/%s not found", repo.Namespace, spec.SecretRef.Name)
	case err != nil:
		return writeback.Request{}, syncv1.ReasonPushFailed, fmt.Errorf("reading spec.imageUpdate.secretRef: %w", err)
	}
	auth, err := writeback.AuthFromSecret(&secret, repo.Spec.Git.URL)
	if err != nil {
		return writeback.Request{}, syncv1.ReasonCredentialsRefused, fmt.Errorf("spec.imageUpdate.secretRef: %w", err)
	}
	return writeback.Request{
		Repository: repo.Namespace + "/" + repo.Name, URL: repo.Spec.Git.URL, Auth: auth,
		Branch: branch, Path: spec.Path, Namespace: repo.Namespace, Images: images,
	}, "", nil
}

// selectedImages maps each ImagePolicy of namespace with a selected image to it.
func (r *RepositoryReconciler) selectedImages(ctx context.Context, namespace string) (map[string]setters.Image, error) {
	var policies syncv1.ImagePolicyList
	if err := r.Client.List(ctx, &policies, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("listing ImagePolicies in %s: %w", namespace, err)
	}
	images := map[string]setters.Image{}
	for _, p := range policies.Items {
		if img, ok := setters.ParseImage(p.Status.LatestImage); ok {
			images[p.Name] = img
		}
	}
	return images, nil
}

// observed digests what a write-back depends on besides the Git content.
func observed(generation int64, images map[string]setters.Image) string {
	names := make([]string, 0, len(images))
	for n := range images {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	fmt.Fprintf(h, "generation=%d\n", generation)
	for _, n := range names {
		fmt.Fprintf(h, "%s=%s\n", n, images[n])
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

func (r *RepositoryReconciler) conditions(repo *syncv1.Repository, ok bool, reason, msg string) []metav1.Condition {
	return ssa.Conditions(repo.Status.Conditions, []string{syncv1.ConditionImagesUpdated},
		ssa.Condition(syncv1.ConditionImagesUpdated, ok, reason, msg, repo.Generation))
}

func (r *RepositoryReconciler) apply(ctx context.Context, repo *syncv1.Repository, st repositoryStatus) error {
	if err := ssa.ApplyStatus(ctx, r.Client, repo, syncv1.FieldManagerImage, st); err != nil {
		return fmt.Errorf("writing status of Repository %s/%s: %w", repo.Namespace, repo.Name, err)
	}
	return nil
}

func refusedMessage(id, namespace string, refused []writeback.Location, result string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: markers may only name ImagePolicies in namespace %s; left alone:", id, namespace)
	for i, l := range refused {
		if i == maxRefusedListed {
			fmt.Fprintf(&b, " and %d more", len(refused)-i)
			break
		}
		fmt.Fprintf(&b, " %s", l)
	}
	return b.String() + ". Otherwise " + result
}

func updates(updated map[string]string) string {
	refs := make([]string, 0, len(updated))
	for ref, img := range updated {
		refs = append(refs, ref+" -> "+img)
	}
	sort.Strings(refs)
	return strings.Join(refs, ", ")
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

// errNotStarted is what the readiness check reports before the caches sync.
var errNotStarted = errors.New("the image-controller's caches have not synced yet")
