// Package preview keeps a Repository's previews: pull requests, merge
// requests and branches rendered before they merge, into preview Revisions
// that the sync-controller plans with dry-runs only. The Repository
// reconciler calls it after each successful fetch; it writes nothing in the
// cluster but preview Revisions, their desired-state Secrets and the
// status.previews the Repository reconciler applies.
package preview

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/ssa"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/application"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/gitrepo"
)

const (
	// refLagRetry and refLagWindow: how often, and for how long after the
	// request, a preview whose ref is not yet at the requested commit is
	// fetched again.
	refLagRetry  = 5 * time.Second
	refLagWindow = 5 * time.Minute
)

// Reconciler keeps the previews of the Repositories that set spec.previews.
type Reconciler struct {
	Client client.Client
	// APIReader reads what the cache may not have seen yet.
	APIReader client.Reader
	Git       *gitrepo.Cache
	Renderer  *application.Renderer
	Now       func() time.Time
}

// Previews implements repository.Previewer: it works out status.previews,
// renders each active preview at its ref's tip against tracked, deletes the
// preview Revisions no preview keeps, and says when a closed preview's
// keepAfterClose ends. A Repository without spec.previews has none, and its
// leftover preview Revisions are deleted.
func (r *Reconciler) Previews(ctx context.Context, repo *syncv1.Repository, auth *gitrepo.Auth, tracked string) ([]syncv1.PreviewStatus, time.Duration) {
	now := r.Now()
	if repo.Spec.Previews == nil {
		// Preview Revisions exist only while status lists their preview,
		// so a Repository that lists none has none to delete.
		if len(repo.Status.Previews) > 0 {
			r.collect(ctx, repo, nil)
		}
		return nil, 0
	}
	key := gitrepo.RepoKey{Namespace: repo.Namespace, Name: repo.Name}
	var branches []string
	listed := true
	if len(repo.Spec.Previews.Branches) > 0 {
		var err error
		if branches, err = r.Git.ListBranches(ctx, key, repo.Spec.Git.URL, auth); err != nil {
			listed = false
			log.FromContext(ctx).Error(err, "listing branches for previews; branch previews stay as they were")
		}
	}
	ps := states(repo, branches, listed, now)
	requested := requestedCommits(repo)

	// keep holds, per preview, the Revisions to keep; a nil set keeps all
	// of that preview's Revisions (closed, or failed before it rendered).
	keep := map[string]map[string]bool{}
	var after time.Duration
	for i := range ps {
		p := &ps[i]
		switch p.State {
		case "":
			names, err := r.render(ctx, repo, auth, tracked, p)
			if err != nil {
				p.State = syncv1.PreviewFailed
				p.Message = ssa.Truncate(fmt.Sprintf("%s; retrying at the next poll", err))
				keep[p.Name] = nil
				continue
			}
			keep[p.Name] = names
			// A Git host may move the ref a moment after it sends the
			// event that names the new commit: look again soon, for a while.
			if want := requested[p.Name]; want != "" && want != p.Commit && now.Sub(p.RequestedAt.Time) < refLagWindow {
				p.Message = ssa.Truncate(fmt.Sprintf("%s; %s is at %s, not yet at the requested commit %s: looking again in %s",
					p.Message, p.Ref, short(p.Commit), short(want), refLagRetry))
				after = sooner(after, refLagRetry)
			}
		case syncv1.PreviewClosed:
			keep[p.Name] = nil
			if p.ClosedAt != nil {
				after = sooner(after, p.ClosedAt.Add(keepAfterClose(repo.Spec.Previews)).Sub(now)+time.Second)
			}
		}
	}
	r.collect(ctx, repo, keep)
	return ps, after
}

// requestedCommits maps each well-formed request that names its head
// commit to that commit.
func requestedCommits(repo *syncv1.Repository) map[string]string {
	out := map[string]string{}
	for k, v := range repo.Annotations {
		if name, req, ok, err := syncv1.ParsePreviewRequest(k, v); ok && err == nil && req.Commit != "" && !req.Closed {
			out[name] = req.Commit
		}
	}
	return out
}

// sooner is the shorter of two waits, where zero is no wait asked for.
func sooner(a, b time.Duration) time.Duration {
	if a == 0 || b < a {
		return b
	}
	return a
}

// collect deletes the Repository's preview Revisions that keep does not
// hold. It acts only on Revisions whose
// spec says they preview this Repository: never on a desired Revision.
func (r *Reconciler) collect(ctx context.Context, repo *syncv1.Repository, keep map[string]map[string]bool) {
	isPreview, _ := labels.NewRequirement(syncv1.PreviewLabel, selection.Exists, nil)
	ofRepo, _ := labels.NewRequirement(syncv1.RepositoryLabel, selection.Equals, []string{repo.Name})
	var list syncv1.RevisionList
	if err := r.Client.List(ctx, &list, client.InNamespace(repo.Namespace),
		client.MatchingLabelsSelector{Selector: labels.NewSelector().Add(*isPreview, *ofRepo)}); err != nil {
		log.FromContext(ctx).Error(err, "listing preview Revisions to delete")
		return
	}
	for i := range list.Items {
		rev := &list.Items[i]
		if !rev.IsPreview() || rev.Spec.Preview.Repository != repo.Name {
			continue
		}
		names, ok := keep[rev.Spec.Preview.Name]
		if ok && (names == nil || names[rev.Name]) {
			continue
		}
		if err := r.delete(ctx, rev); err != nil {
			log.FromContext(ctx).Error(err, "deleting preview Revision", "revision", rev.Name)
			continue
		}
		log.FromContext(ctx).Info("deleted preview Revision", "revision", rev.Name, "preview", rev.Spec.Preview.Name)
	}
}

// delete removes a preview Revision; garbage collection removes its
// desired-state Secret, which the Revision controls, so the
// source-controller needs no right to delete Secrets.
func (r *Reconciler) delete(ctx context.Context, rev *syncv1.Revision) error {
	return client.IgnoreNotFound(r.Client.Delete(ctx, rev, client.PropagationPolicy(metav1.DeletePropagationBackground)))
}
