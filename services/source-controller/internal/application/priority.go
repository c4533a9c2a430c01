package application

import (
	"context"
	"path"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/gitrepo"
)

const (
	// changedFirst is the queue priority of an Application whose files a
	// new commit changed: it is rendered before those the commit leaves
	// alone, which render to the Revision they have.
	changedFirst = 10
	// diffTimeout bounds the comparison of two commits; past it every
	// Application is queued alike.
	diffTimeout = 10 * time.Second
)

// rendersOfRepository queues the Applications of a Repository. On a new
// commit those whose source path the commit changed go first: a commit that
// touches one app of a thousand deploys it without waiting behind the
// others. Every Application is still queued, since a render may read files
// outside its path (a Kustomize base, a values file).
func (r *Reconciler) rendersOfRepository() handler.EventHandler {
	all := handler.EnqueueRequestsFromMapFunc(r.applicationsOf)
	return handler.Funcs{
		CreateFunc:  all.Create,
		DeleteFunc:  all.Delete,
		GenericFunc: all.Generic,
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			apps := r.appsOf(ctx, e.ObjectNew)
			pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request])
			var changed []string
			if ok && len(apps) > 1 {
				// Only an order among several Applications needs the diff.
				changed = r.changedPaths(ctx, e.ObjectOld, e.ObjectNew)
			}
			var rest []reconcile.Request
			for i := range apps {
				req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&apps[i])}
				if changed != nil && Touches(changed, apps[i].Spec.Source.Path) {
					pq.AddWithOpts(priorityqueue.AddOpts{Priority: new(changedFirst)}, req)
					continue
				}
				rest = append(rest, req)
			}
			for _, req := range rest {
				q.Add(req)
			}
		},
	}
}

// changedPaths lists the files that differ between the commits fetched
// before and after an update of a Repository, or nil when that cannot be
// told: no earlier commit, a clone that lacks it (a new URL, a cold
// cache), or a comparison that failed or took too long.
func (r *Reconciler) changedPaths(ctx context.Context, old, cur client.Object) []string {
	from, to := fetchedCommit(old), fetchedCommit(cur)
	if from == "" || to == "" {
		return nil
	}
	changed, err := r.comparisons.changedPaths(ctx, r.Git, commitPair{
		repo: gitrepo.RepoKey{Namespace: cur.GetNamespace(), Name: cur.GetName()}, from: from, to: to})
	if err != nil {
		ctrl.LoggerFrom(ctx).V(1).Info("rendering every Application alike: the commit's changes are unknown",
			"repository", client.ObjectKeyFromObject(cur), "error", err.Error())
		return nil
	}
	return changed
}

// Touches reports whether any of changed, sorted paths of files, lies at or
// under sourcePath, an Application's spec.source.path.
func Touches(changed []string, sourcePath string) bool {
	p := strings.TrimPrefix(path.Clean("/"+sourcePath), "/")
	if p == "" {
		return len(changed) > 0
	}
	if i := sort.SearchStrings(changed, p); i < len(changed) && changed[i] == p {
		return true
	}
	dir := p + "/"
	i := sort.SearchStrings(changed, dir)
	return i < len(changed) && strings.HasPrefix(changed[i], dir)
}

// fetchedCommit is a Repository's status.artifact.commit.
func fetchedCommit(o client.Object) string {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return ""
	}
	c, _, _ := unstructured.NestedString(u.Object, "status", "artifact", "commit")
	return c
}

// appsOf lists the Applications that render from a Repository.
func (r *Reconciler) appsOf(ctx context.Context, o client.Object) []syncv1.Application {
	var apps syncv1.ApplicationList
	if err := r.Client.List(ctx, &apps, client.InNamespace(o.GetNamespace()),
		client.MatchingFields{RepositoryRefIndex: o.GetName()}); err != nil {
		return nil
	}
	return apps.Items
}
