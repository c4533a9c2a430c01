package application

// Leaving alone the Applications a commit cannot change. At 10 000
// Applications in one Repository, rendering all of them again at every commit
// was 10 000 renders, desired-state reads and Application status writes for
// a commit that changed one app (docs/benchmarks.md, issue 41).

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/gitrepo"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/render"
)

// lastRender is what this process knows of an Application's last render:
// at which generation and commit it rendered which Revision, and what of
// the repository it read. It is memory, not a record: a new process has
// none and renders every Application at the next commit.
type lastRender struct {
	generation int64
	commit     string
	revision   string
	inputs     *render.Inputs
	// checked is the latest commit known to render as commit did: the
	// next commit is compared with it, so that every Application left
	// alone shares the one comparison of the Repository's last two
	// commits. Comparing with commit instead cost a second comparison
	// per push, each loading a thousand trees at N = 1000.
	checked string
}

// lastRenders holds the last render of each Application rendered by this
// process from nothing but its commit. The zero value is ready.
type lastRenders struct {
	mu sync.Mutex
	m  map[types.NamespacedName]lastRender
}

func (l *lastRenders) get(key types.NamespacedName) (lastRender, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.m[key]
	return r, ok
}

// put remembers a render; nil inputs (a render that read more than the
// commit) forget the Application instead.
func (l *lastRenders) put(key types.NamespacedName, r lastRender) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r.inputs == nil {
		delete(l.m, key)
		return
	}
	if l.m == nil {
		l.m = map[types.NamespacedName]lastRender{}
	}
	l.m[key] = r
}

func (l *lastRenders) forget(key types.NamespacedName) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.m, key)
}

// maxComparisons bounds the comparisons of commit pairs kept: the
// Applications of a Repository usually share one pair, from the commit
// before to the new one.
const maxComparisons = 64

type commitPair struct {
	repo     gitrepo.RepoKey
	from, to string
}

// comparison is one pair's changed files, computed once however many
// Applications ask at the same time.
type comparison struct {
	once    sync.Once
	changed []string
	err     error
}

// comparisons keeps the changed files of recent commit pairs. The zero
// value is ready.
type comparisons struct {
	mu      sync.Mutex
	entries map[commitPair]*comparison
	order   []commitPair
}

// changedPaths returns the files that differ between two commits of a
// Repository, comparing each pair once.
func (c *comparisons) changedPaths(ctx context.Context, git *gitrepo.Cache, pair commitPair) ([]string, error) {
	c.mu.Lock()
	if c.entries == nil {
		c.entries = map[commitPair]*comparison{}
	}
	e, ok := c.entries[pair]
	if !ok {
		e = &comparison{}
		c.entries[pair] = e
		c.order = append(c.order, pair)
		if len(c.order) > maxComparisons {
			delete(c.entries, c.order[0])
			c.order = c.order[1:]
		}
	}
	c.mu.Unlock()
	e.once.Do(func() {
		ctx, cancel := context.WithTimeout(ctx, diffTimeout)
		defer cancel()
		e.changed, e.err = git.ChangedPaths(ctx, pair.repo, pair.from, pair.to)
	})
	if e.err != nil {
		// A failed comparison (a timeout, a clone not yet fetched) is
		// tried again by the next caller.
		c.mu.Lock()
		if c.entries[pair] == e {
			delete(c.entries, pair)
		}
		c.mu.Unlock()
	}
	return e.changed, e.err
}

// unchangedBy reports whether commit cannot change what app renders: this
// process rendered the Application's generation last at an earlier commit
// of the same Repository, its status still shows that render, and the
// files that changed since include nothing the render read. When it
// cannot be told, the Application is rendered.
func (r *Reconciler) unchangedBy(ctx context.Context, app *syncv1.Application, repo gitrepo.RepoKey, commit string) bool {
	key := types.NamespacedName{Namespace: app.Namespace, Name: app.Name}
	last, ok := r.lastRenders.get(key)
	if !ok || last.generation != app.Generation || last.commit != app.Status.SourceCommit ||
		last.revision != app.Status.DesiredRevision {
		return false
	}
	if last.checked == commit {
		return true
	}
	c := meta.FindStatusCondition(app.Status.Conditions, syncv1.ConditionRendered)
	if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != app.Generation {
		return false
	}
	changed, err := r.comparisons.changedPaths(ctx, r.Git, commitPair{repo: repo, from: last.checked, to: commit})
	if err != nil || last.inputs.ChangedBy(changed) {
		return false
	}
	last.checked = commit
	r.lastRenders.put(key, last)
	ctrl.LoggerFrom(ctx).V(1).Info("not rendered again: the commit changes no file its last render read",
		"commit", commit, "renderedCommit", last.commit, "revision", last.revision)
	return true
}
