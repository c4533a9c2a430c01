// Package cachepruner keeps the source cache bounded: every hour it removes
// checkouts no Revision or Repository refers to, clones of deleted
// Repositories unused for an hour, and Helm charts unused for a day.
package cachepruner

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/chart"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/gitrepo"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/repository"
)

// The guide's schedule.
const (
	Interval       = time.Hour
	CloneUnusedFor = time.Hour
	ChartUnusedFor = 24 * time.Hour
	startupDelay   = time.Minute
	listTimeout    = time.Minute
)

// Pruner is a manager Runnable; it runs on every replica, because every
// replica keeps its own cache.
type Pruner struct {
	Client client.Reader
	Git    *gitrepo.Cache
	Charts *chart.Puller
	Log    logr.Logger
	// After waits for the next prune, as time.After (nil) does; tests pass
	// their own to run the schedule without waiting an hour.
	After func(time.Duration) <-chan time.Time
}

// NeedLeaderElection is false: each replica prunes its own cache.
func (p *Pruner) NeedLeaderElection() bool { return false }

// Start prunes once a minute after start-up and then every Interval.
func (p *Pruner) Start(ctx context.Context) error {
	after := p.After
	if after == nil {
		after = time.After
	}
	for wait := startupDelay; ; wait = Interval {
		select {
		case <-ctx.Done():
			return nil
		case <-after(wait):
		}
		if err := p.Prune(ctx, time.Now()); err != nil {
			p.Log.Error(err, "pruning the source cache")
		}
	}
}

// Prune removes what nothing refers to any more and logs the counts.
func (p *Pruner) Prune(ctx context.Context, now time.Time) error {
	keep, existing, err := p.references(ctx)
	if err != nil {
		return err
	}
	checkouts, clones, err := p.Git.Prune(ctx, keep, existing, CloneUnusedFor, now)
	p.Log.Info("Pruned Git source cache", "checkouts", checkouts, "clones", clones)
	if err != nil {
		return err
	}
	charts, err := p.Charts.Prune(ChartUnusedFor)
	p.Log.Info("Pruned Helm chart cache", "charts", charts)
	return err
}

// references lists, per Repository, the commits still referred to: the
// fetched one, the one each of its Applications rendered last
// (status.sourceCommit) and the one each retained Revision of them was
// first rendered from (spec.source.commit).
func (p *Pruner) references(ctx context.Context) (map[gitrepo.RepoKey]map[string]bool, map[gitrepo.RepoKey]bool, error) {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	repos := repository.UnstructuredList()
	if err := p.Client.List(ctx, repos); err != nil {
		return nil, nil, err
	}
	var apps syncv1.ApplicationList
	if err := p.Client.List(ctx, &apps); err != nil {
		return nil, nil, err
	}
	var revs syncv1.RevisionList
	if err := p.Client.List(ctx, &revs); err != nil {
		return nil, nil, err
	}
	keep := map[gitrepo.RepoKey]map[string]bool{}
	existing := map[gitrepo.RepoKey]bool{}
	add := func(k gitrepo.RepoKey, commit string) {
		if keep[k] == nil {
			keep[k] = map[string]bool{}
		}
		keep[k][commit] = true
	}
	for _, r := range repos.Items {
		k := gitrepo.RepoKey{Namespace: r.GetNamespace(), Name: r.GetName()}
		existing[k] = true
		if commit, _, _ := unstructured.NestedString(r.Object, "status", "artifact", "commit"); commit != "" {
			add(k, commit)
		}
	}
	repoOf := map[client.ObjectKey]gitrepo.RepoKey{}
	for _, a := range apps.Items {
		k := gitrepo.RepoKey{Namespace: a.Namespace, Name: a.Spec.Source.RepositoryRef.Name}
		repoOf[client.ObjectKeyFromObject(&a)] = k
		if a.Status.SourceCommit != "" {
			add(k, a.Status.SourceCommit)
		}
	}
	for _, rev := range revs.Items {
		k, ok := repoOf[rev.ApplicationKey()]
		if ok && rev.Spec.Source != nil {
			add(k, rev.Spec.Source.Commit)
		}
	}
	return keep, existing, nil
}
