package controller

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/services/notify-controller/internal/delivery"
	"github.com/kuvryn/kuvryn-sync/services/notify-controller/internal/payload"
)

// previewReconciler hands each preview Revision's result to the github or
// gitlab sink of its Repository (spec.previews.sinkRef): a pending commit
// status while it has no plan, success once Planned, failure once Failed,
// and with the last two the Application's comment on the pull or merge
// request. Each (Revision, state) is queued once per process; a repeat after
// a restart sets the same status and rewrites the same comment, so nothing
// is recorded in the cluster (docs/design.md, "Previews").
type previewReconciler struct {
	client     client.Client
	reader     client.Reader
	dispatcher *delivery.Dispatcher

	mu sync.Mutex
	// sent holds, per preview Revision, what was queued and which problems
	// were reported, so neither happens twice for the same Revision.
	sent map[types.NamespacedName]*previewRecord
}

type previewRecord struct {
	uid      types.UID
	queued   map[payload.PreviewState]bool
	reported map[string]bool
}

func (r *previewReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	rev := &syncv1.Revision{}
	if err := r.client.Get(ctx, req.NamespacedName, rev); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if !rev.IsPreview() {
		return ctrl.Result{}, nil
	}
	repo := &syncv1.Repository{}
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: rev.Namespace, Name: rev.Spec.Preview.Repository}, repo); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if repo.Spec.Previews == nil || repo.Spec.Previews.SinkRef == nil {
		return ctrl.Result{}, nil
	}
	p := previewOf(rev, repo)
	if r.queued(rev, p.State) {
		return ctrl.Result{}, nil
	}
	sinkKey := types.NamespacedName{Namespace: rev.Namespace, Name: repo.Spec.Previews.SinkRef.Name}
	st, err := checkSink(ctx, r.client, r.reader, sinkKey)
	if err != nil {
		return ctrl.Result{}, err
	}
	if st.problem == "" && !receivesPreviews(st.sink.Spec.Type) {
		st.problem = fmt.Sprintf("NotificationSink %s is of type %s; Repository %s names it in spec.previews.sinkRef, which needs type github or gitlab",
			sinkKey.Name, st.sink.Spec.Type, repo.Name)
	}
	j := delivery.Job{Preview: p, Sink: sinkKey, Revision: rev}
	if st.problem != "" {
		if r.report(rev, st.problem) {
			r.dispatcher.Undeliverable(j, st.problem)
		}
		return ctrl.Result{RequeueAfter: notReadyRetry}, nil
	}
	j.SinkType = st.sink.Spec.Type
	r.markQueued(rev, p.State)
	r.dispatcher.Enqueue(j)
	return ctrl.Result{}, nil
}

func receivesPreviews(t syncv1.SinkType) bool {
	return t == syncv1.SinkGitHub || t == syncv1.SinkGitLab
}

// previewOf is what the pull request hears of rev.
func previewOf(rev *syncv1.Revision, repo *syncv1.Repository) *payload.Preview {
	spec := rev.Spec.Preview
	p := &payload.Preview{
		Application:    payload.ApplicationRef{Namespace: rev.Namespace, Name: rev.Spec.ApplicationName},
		Revision:       rev.Name,
		Name:           spec.Name,
		Number:         pullRequestNumber(spec.Name, repo),
		Commit:         spec.Commit,
		NewApplication: spec.NewApplication != nil,
		Withheld:       spec.Withheld,
		State:          payload.PreviewPending,
	}
	switch {
	case rev.Status.Phase == syncv1.PhaseFailed:
		p.State = payload.PreviewFailure
		p.Plan = rev.Status.Plan
		p.Diagnosis = rev.Status.Diagnosis
		p.Reason, p.Message = failureOf(rev)
	case rev.Status.Plan != nil && meta.IsStatusConditionTrue(rev.Status.Conditions, syncv1.ConditionPlanned):
		p.State = payload.PreviewSuccess
		p.Plan = rev.Status.Plan
	}
	return p
}

// pullRequestNumber is the number of preview name: from the Repository's
// status.previews, else from the name itself (pr-<n>, mr-<n>); zero for a
// branch, which has no pull request.
func pullRequestNumber(name string, repo *syncv1.Repository) int {
	for _, s := range repo.Status.Previews {
		if s.Name == name && s.Number > 0 {
			return int(s.Number)
		}
	}
	for _, prefix := range []string{"pr-", "mr-"} {
		if rest, ok := strings.CutPrefix(name, prefix); ok {
			if n, err := strconv.Atoi(rest); err == nil && n > 0 {
				return n
			}
		}
	}
	return 0
}

// failureOf is the reason and message of a Failed preview Revision: its
// Planned condition, which a render failure sets too.
func failureOf(rev *syncv1.Revision) (string, string) {
	if c := meta.FindStatusCondition(rev.Status.Conditions, syncv1.ConditionPlanned); c != nil && c.Status == metav1.ConditionFalse {
		return c.Reason, c.Message
	}
	for _, c := range rev.Status.Conditions {
		if c.Status == metav1.ConditionFalse {
			return c.Reason, c.Message
		}
	}
	return syncv1.ReasonPlanFailed, "the plan failed"
}

// record is rev's entry, started afresh when the name now has another UID.
func (r *previewReconciler) record(rev *syncv1.Revision) *previewRecord {
	key := client.ObjectKeyFromObject(rev)
	rec := r.sent[key]
	if rec == nil || rec.uid != rev.UID {
		rec = &previewRecord{uid: rev.UID, queued: map[payload.PreviewState]bool{}, reported: map[string]bool{}}
		r.sent[key] = rec
	}
	return rec
}

func (r *previewReconciler) queued(rev *syncv1.Revision, s payload.PreviewState) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.record(rev).queued[s]
}

func (r *previewReconciler) markQueued(rev *syncv1.Revision, s payload.PreviewState) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record(rev).queued[s] = true
}

// report says whether problem is new for rev, and remembers it.
func (r *previewReconciler) report(rev *syncv1.Revision, problem string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := r.record(rev)
	if rec.reported[problem] {
		return false
	}
	rec.reported[problem] = true
	return true
}

func (r *previewReconciler) forget(key types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.sent, key)
}

// previewRevisions are the preview Revisions of Repository repo.
func (r *previewReconciler) previewRevisions(ctx context.Context, namespace, repo string) []reconcile.Request {
	var revs syncv1.RevisionList
	if err := r.client.List(ctx, &revs, client.InNamespace(namespace),
		client.MatchingLabels{syncv1.RepositoryLabel: repo}, client.HasLabels{syncv1.PreviewLabel}); err != nil {
		logr.FromContextOrDiscard(ctx).Error(err, "listing the preview Revisions of a Repository", "repository", repo)
		return nil
	}
	var reqs []reconcile.Request
	for i := range revs.Items {
		if revs.Items[i].IsPreview() {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&revs.Items[i])})
		}
	}
	return reqs
}

// repositoryEvents wakes a Repository's preview Revisions, so a sinkRef
// set later still reports them.
func (r *previewReconciler) repositoryEvents() handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
		return r.previewRevisions(ctx, obj.GetNamespace(), obj.GetName())
	})
}

// sinkEvents wakes the preview Revisions of every Repository naming a sink.
func (r *previewReconciler) sinkEvents() handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
		var reqs []reconcile.Request
		for _, repo := range repositoriesNaming(ctx, r.client, obj.GetNamespace(), obj.GetName()) {
			reqs = append(reqs, r.previewRevisions(ctx, repo.Namespace, repo.Name)...)
		}
		return reqs
	})
}

// repositoriesNaming are the Repositories whose spec.previews.sinkRef names sink.
func repositoriesNaming(ctx context.Context, c client.Reader, namespace, sink string) []syncv1.Repository {
	var repos syncv1.RepositoryList
	if err := c.List(ctx, &repos, client.InNamespace(namespace)); err != nil {
		logr.FromContextOrDiscard(ctx).Error(err, "listing the Repositories of a NotificationSink", "sink", sink)
		return nil
	}
	var out []syncv1.Repository
	for _, repo := range repos.Items {
		if p := repo.Spec.Previews; p != nil && p.SinkRef != nil && p.SinkRef.Name == sink {
			out = append(out, repo)
		}
	}
	return out
}

func (r *previewReconciler) setup(mgr ctrl.Manager) error {
	isPreview := predicate.NewPredicateFuncs(func(obj client.Object) bool {
		rev, ok := obj.(*syncv1.Revision)
		return ok && rev.IsPreview()
	})
	return ctrl.NewControllerManagedBy(mgr).
		WithOptions(manager.ControllerOptions()).
		Named("notify-preview").
		For(&syncv1.Revision{}, builder.WithPredicates(isPreview)).
		Watches(&syncv1.Repository{}, r.repositoryEvents()).
		Watches(&syncv1.NotificationSink{}, r.sinkEvents()).
		Complete(r)
}
