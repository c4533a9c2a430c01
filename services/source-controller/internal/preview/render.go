package preview

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/desiredstate"
	"github.com/kuvryn/kuvryn-sync/pkg/message"
	"github.com/kuvryn/kuvryn-sync/pkg/ssa"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/application"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/discovery"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/gitrepo"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/repository"
)

const (
	// maxApplications bounds the Applications one preview renders, as
	// status.previews[].applications is bounded.
	maxApplications = 100
	// maxWithheld and maxWithheldBytes bound spec.preview.withheld, as its
	// schema does.
	maxWithheld      = 20
	maxWithheldBytes = 512
)

// candidate is one Application a preview renders, with the spec it renders
// with: the live one, or the one the preview's .ksync.yaml declares.
type candidate struct {
	app    *syncv1.Application
	newApp bool
}

// render fetches the preview's ref, renders the Applications it changes
// against tracked into preview Revisions, and records the outcome in p. It
// returns the names of the preview's Revisions at this commit. An error is
// one the preview as a whole failed with (a fetch, a comparison, the API
// server, a chart repository that is down): the next poll tries again.
func (r *Reconciler) render(ctx context.Context, repo *syncv1.Repository, auth *gitrepo.Auth, tracked string, p *syncv1.PreviewStatus) (map[string]bool, error) {
	key := gitrepo.RepoKey{Namespace: repo.Namespace, Name: repo.Name}
	commit, err := r.Git.FetchRef(ctx, key, repo.Spec.Git.URL, auth, p.Ref)
	if err != nil {
		return nil, err
	}
	p.Commit = commit
	apps, err := r.changed(ctx, repo, key, tracked, commit)
	if err != nil {
		return nil, err
	}
	msg := ""
	if len(apps) > maxApplications {
		msg = fmt.Sprintf("; %d Applications changed, only the first %d are previewed", len(apps), maxApplications)
		apps = apps[:maxApplications]
	}
	names := map[string]bool{}
	var rendered []string
	failed := 0
	for _, c := range apps {
		name, ok, err := r.renderApplication(ctx, repo, p, c)
		if err != nil {
			return nil, fmt.Errorf("Application %s: %w", c.app.Name, err)
		}
		names[name] = true
		rendered = append(rendered, c.app.Name)
		if !ok {
			failed++
		}
	}
	p.State = syncv1.PreviewRendered
	p.Applications = rendered
	p.Message = ssa.Truncate(fmt.Sprintf("commit %s compared with %s: %d Applications rendered, %d of them failed to render%s",
		short(commit), short(tracked), len(rendered), failed, msg))
	return names, nil
}

// changed lists, sorted by name, the Applications of the Repository that
// the preview's commit changes against tracked: those whose source path it
// changes, those whose .ksync.yaml entry it changes (rendered with the new
// entry) and those its .ksync.yaml declares that do not exist yet.
func (r *Reconciler) changed(ctx context.Context, repo *syncv1.Repository, key gitrepo.RepoKey, tracked, commit string) ([]candidate, error) {
	paths, err := r.Git.ChangedPaths(ctx, key, tracked, commit)
	if err != nil {
		return nil, err
	}
	var before, after map[string]discovery.Application
	configs := discovery.Paths(repo)
	if slices.ContainsFunc(configs, func(p string) bool { _, found := slices.BinarySearch(paths, p); return found }) {
		// The tracked declarations were discovered already; one that no
		// longer parses leaves every preview declaration as changed.
		before, _ = r.declared(ctx, repo, key, tracked, configs)
		if after, err = r.declared(ctx, repo, key, commit, configs); err != nil {
			return nil, fmt.Errorf("commit %s: %w", short(commit), err)
		}
	}

	var live syncv1.ApplicationList
	if err := r.Client.List(ctx, &live, client.InNamespace(repo.Namespace),
		client.MatchingFields{application.RepositoryRefIndex: repo.Name}); err != nil {
		return nil, err
	}
	var out []candidate
	exists := map[string]bool{}
	for i := range live.Items {
		a := live.Items[i].DeepCopy()
		exists[a.Name] = true
		if a.DeletionTimestamp != nil {
			continue
		}
		if d, ok := after[a.Name]; ok && d.Spec.Source.RepositoryRef.Name == repo.Name {
			if b, was := before[a.Name]; !was || !equality.Semantic.DeepEqual(b.Spec, d.Spec) {
				a.Spec = d.Spec
				out = append(out, candidate{app: a})
				continue
			}
		}
		if application.Touches(paths, a.Spec.Source.Path) {
			out = append(out, candidate{app: a})
		}
	}
	for name, d := range after {
		if exists[name] || d.Spec.Source.RepositoryRef.Name != repo.Name {
			continue
		}
		// A name another Repository's Application holds is not new, and
		// discovery would refuse it at merge: nothing to preview.
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: repo.Namespace, Name: name}, &syncv1.Application{})
		if !apierrors.IsNotFound(err) {
			if err != nil {
				return nil, err
			}
			continue
		}
		out = append(out, candidate{newApp: true, app: &syncv1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: repo.Namespace, Labels: d.Labels},
			Spec:       d.Spec,
		}})
	}
	slices.SortFunc(out, func(a, b candidate) int { return strings.Compare(a.app.Name, b.app.Name) })
	return out, nil
}

// declared reads the Applications the .ksync.yaml files declare at commit.
func (r *Reconciler) declared(ctx context.Context, repo *syncv1.Repository, key gitrepo.RepoKey, commit string, configs []string) (map[string]discovery.Application, error) {
	dir, err := r.Git.Checkout(ctx, key, commit)
	if err != nil {
		return nil, err
	}
	files, err := repository.ReadConfigs(dir, configs)
	if err != nil {
		return nil, err
	}
	apps, err := discovery.Parse(repo.Namespace, repo.Name, configs, files)
	if err != nil {
		return nil, err
	}
	out := make(map[string]discovery.Application, len(apps))
	for _, a := range apps {
		out[a.Name] = a
	}
	return out, nil
}

// renderApplication renders one Application at the preview's commit into
// its preview Revision and returns the Revision's name and whether it
// rendered. A render failure is a preview Revision too, without desired
// state, whose spec.renderFailure says why, as a desired Revision records
// one; the error returned is one that a retry may heal. The
// source-controller writes no preview Revision status either.
func (r *Reconciler) renderApplication(ctx context.Context, repo *syncv1.Repository, p *syncv1.PreviewStatus, c candidate) (string, bool, error) {
	spec := &syncv1.RevisionPreview{Name: p.Name, Repository: repo.Name, Ref: p.Ref, Commit: p.Commit}
	if c.newApp {
		spec.NewApplication = &syncv1.PreviewApplication{
			ServiceAccountName: c.app.Spec.ServiceAccountName, DestinationNamespace: c.app.DestinationNamespace(),
		}
	}
	key := gitrepo.RepoKey{Namespace: repo.Namespace, Name: repo.Name}
	out, err := r.Renderer.Render(ctx, c.app, key, p.Commit, !repo.Spec.Previews.Decrypt)
	if out != nil {
		spec.Withheld = boundWithheld(out.Withheld)
	}
	var data []byte
	var digest string
	if err == nil {
		data, digest, err = application.EncodeDesiredState(c.app, out.Objects)
	}
	if err != nil {
		reason, transient := application.FailureReason(err)
		if transient || errors.Is(err, gitrepo.ErrNotFetched) {
			return "", false, err
		}
		msg := fmt.Sprintf("commit %s: %s", short(p.Commit), err)
		name := desiredstate.PreviewRevisionName(c.app.Name, p.Name, "render-failed\x00"+reason+"\x00"+msg, p.Commit)
		rev := r.newRevision(repo, name, c.app, spec)
		rev.Spec.RenderFailure = &syncv1.RenderFailure{Reason: reason, Message: ssa.Truncate(msg)}
		if _, err := r.ensure(ctx, rev); err != nil {
			return "", false, fmt.Errorf("Repository %s/%s: recording the render failure as Revision %s: %w", repo.Namespace, repo.Name, name, err)
		}
		return name, false, nil
	}
	name := desiredstate.PreviewRevisionName(c.app.Name, p.Name, digest, p.Commit)
	rev := r.newRevision(repo, name, c.app, spec)
	rev.Spec.DesiredState = syncv1.DesiredStateRef{SecretName: name, Digest: digest, Objects: int32(len(out.Objects))}
	rev.Spec.Source.Chart = out.Chart
	fresh, err := r.ensure(ctx, rev)
	if err != nil {
		return "", false, err
	}
	return name, true, application.EnsureDesiredState(ctx, r.Client, r.APIReader, rev, data, fresh)
}

// ensure creates rev unless it exists, reading it back when it does, and
// reports whether this call created it. Its spec is fixed by its name.
func (r *Reconciler) ensure(ctx context.Context, rev *syncv1.Revision) (bool, error) {
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(rev), rev)
	if err == nil {
		return false, nil
	}
	if !apierrors.IsNotFound(err) {
		return false, err
	}
	return application.CreateRevision(ctx, r.Client, r.APIReader, rev)
}

// newRevision is a preview Revision of app rendered at the preview's
// commit, owned by the Repository so that deleting the Repository deletes
// its previews. It carries the Repository's shard label, so that it is in
// the caches of the shard that keeps the Repository's previews (and plans
// its Applications, which discovery puts in the same shard).
func (r *Reconciler) newRevision(repo *syncv1.Repository, name string, app *syncv1.Application, spec *syncv1.RevisionPreview) *syncv1.Revision {
	labels := map[string]string{syncv1.PreviewLabel: spec.Name, syncv1.RepositoryLabel: repo.Name, syncv1.ApplicationLabel: app.Name}
	if shard, ok := repo.Labels[syncv1.ShardLabel]; ok {
		labels[syncv1.ShardLabel] = shard
	}
	return &syncv1.Revision{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: repo.Namespace,
			Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: syncv1.GroupVersion.String(), Kind: "Repository", Name: repo.Name, UID: repo.UID,
			}},
		},
		Spec: syncv1.RevisionSpec{
			ApplicationName: app.Name,
			Preview:         spec,
			Source:          &syncv1.RevisionSource{Commit: spec.Commit, Path: app.Spec.Source.Path, RenderedAt: metav1.NewTime(r.Now())},
		},
	}
}

// boundWithheld keeps spec.preview.withheld within its schema, saying so
// when it leaves entries out.
func boundWithheld(all []string) []string {
	out := make([]string, 0, min(len(all), maxWithheld))
	for i, w := range all {
		if i == maxWithheld-1 && len(all) > maxWithheld {
			out = append(out, fmt.Sprintf("and %d more", len(all)-i))
			break
		}
		out = append(out, message.Bound(w, maxWithheldBytes))
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}
