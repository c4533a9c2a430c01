package repository

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/discovery"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/gitrepo"
)

// maxConfigBytes bounds one .ksync.yaml file.
const maxConfigBytes = 1 << 20

// discover applies the Applications declared at commit and deletes the ones
// this Repository discovered before that Git no longer declares. It does
// nothing when neither the commit nor the Repository's spec changed since
// the last successful discovery.
func (r *Reconciler) discover(ctx context.Context, repo *syncv1.Repository, commit, fetchedBefore string) (int32, error) {
	if c := meta.FindStatusCondition(repo.Status.Conditions, syncv1.ConditionApplicationsDiscovered); c != nil &&
		c.Status == metav1.ConditionTrue && c.ObservedGeneration == repo.Generation && commit == fetchedBefore {
		inShard, err := r.discoveredInShard(ctx, repo)
		if err != nil || inShard {
			return repo.Status.DiscoveredApplications, err
		}
	}
	key := gitrepo.RepoKey{Namespace: repo.Namespace, Name: repo.Name}
	dir, err := r.Git.Checkout(ctx, key, commit)
	if err != nil {
		return 0, err
	}
	paths := discovery.Paths(repo)
	files, err := ReadConfigs(dir, paths)
	if err != nil {
		return 0, err
	}
	apps, err := discovery.Parse(repo.Namespace, repo.Name, paths, files)
	if err != nil {
		return 0, err
	}
	// A server-side dry run of every Application first: one the API server
	// refuses then leaves all of them as they were, never some applied.
	for _, dryRun := range []bool{true, false} {
		for _, a := range apps {
			if err := r.applyApplication(ctx, repo, a, dryRun); err != nil {
				return 0, err
			}
		}
	}
	declared := map[string]bool{}
	for _, a := range apps {
		declared[a.Name] = true
	}
	return int32(len(apps)), r.pruneApplications(ctx, repo, declared)
}

// ReadConfigs reads the configured files inside the checkout through os.Root,
// so a symlink cannot lead the read outside the repository.
func ReadConfigs(dir string, paths []string) (map[string][]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	files := map[string][]byte{}
	for _, p := range paths {
		f, err := root.Open(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		data, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if len(data) > maxConfigBytes {
			return nil, fmt.Errorf("%s: larger than %d bytes", p, maxConfigBytes)
		}
		files[p] = data
	}
	return files, nil
}

// applyApplication writes one discovered Application with Server-Side Apply
// as kuvryn-source, controlled by the Repository so that deleting the
// Repository deletes it. An Application of the same name that this
// Repository did not discover is left alone and reported.
func (r *Reconciler) applyApplication(ctx context.Context, repo *syncv1.Repository, a discovery.Application, dryRun bool) error {
	existing := &syncv1.Application{}
	key := client.ObjectKey{Namespace: repo.Namespace, Name: a.Name}
	err := r.Client.Get(ctx, key, existing)
	if apierrors.IsNotFound(err) {
		// The cache holds this shard's Applications only: one of another
		// shard, or one this Repository discovered before it moved here,
		// is read from the API server before it is written.
		err = r.APIReader.Get(ctx, key, existing)
	}
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return err
	case existing.Labels[syncv1.RepositoryLabel] != repo.Name:
		return fmt.Errorf("%s: Application %q already exists and was not discovered from this Repository; rename one of them", a.File, a.Name)
	}
	app := &syncv1.Application{
		TypeMeta: metav1.TypeMeta{APIVersion: syncv1.GroupVersion.String(), Kind: "Application"},
		ObjectMeta: metav1.ObjectMeta{
			Name: a.Name, Namespace: repo.Namespace, Labels: inShardOf(repo, a.Labels), Annotations: a.Annotations,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(repo, syncv1.GroupVersion.WithKind("Repository"))},
		},
		Spec: a.Spec,
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(app)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: obj}
	unstructured.RemoveNestedField(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	opts := []client.ApplyOption{client.FieldOwner(syncv1.FieldManagerSource), client.ForceOwnership}
	if dryRun {
		opts = append(opts, client.DryRunAll)
	}
	if err := r.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), opts...); err != nil {
		return fmt.Errorf("%s: Application %q: %w", a.File, a.Name, err)
	}
	return nil
}

// pruneApplications deletes Applications this Repository discovered earlier
// that Git no longer declares.
func (r *Reconciler) pruneApplications(ctx context.Context, repo *syncv1.Repository, declared map[string]bool) error {
	var list syncv1.ApplicationList
	if err := r.Client.List(ctx, &list, client.InNamespace(repo.Namespace),
		client.MatchingLabels{syncv1.RepositoryLabel: repo.Name}); err != nil {
		return err
	}
	for i := range list.Items {
		app := &list.Items[i]
		if declared[app.Name] || !metav1.IsControlledBy(app, repo) {
			continue
		}
		if err := r.Client.Delete(ctx, app); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("pruning Application %q removed from Git: %w", app.Name, err)
		}
		log.FromContext(ctx).Info("pruned Application removed from Git", "application", app.Name)
	}
	return nil
}

// inShardOf is a discovered Application's labels with its Repository's
// shard label, whatever .ksync.yaml says: a Repository's Applications move
// with it from shard to shard.
func inShardOf(repo *syncv1.Repository, labels map[string]string) map[string]string {
	out := make(map[string]string, len(labels)+1)
	for k, v := range labels {
		out[k] = v
	}
	delete(out, syncv1.ShardLabel)
	if shard, ok := repo.Labels[syncv1.ShardLabel]; ok {
		out[syncv1.ShardLabel] = shard
	}
	return out
}

// discoveredInShard reports whether every Application the Repository
// discovered is cached here with the Repository's shard label. One that is
// not was discovered before the Repository moved to this shard, and
// discovery runs again to move it.
func (r *Reconciler) discoveredInShard(ctx context.Context, repo *syncv1.Repository) (bool, error) {
	var list syncv1.ApplicationList
	if err := r.Client.List(ctx, &list, client.InNamespace(repo.Namespace),
		client.MatchingLabels{syncv1.RepositoryLabel: repo.Name}); err != nil {
		return false, err
	}
	if len(list.Items) != int(repo.Status.DiscoveredApplications) {
		return false, nil
	}
	shard, sharded := repo.Labels[syncv1.ShardLabel]
	for _, app := range list.Items {
		if s, ok := app.Labels[syncv1.ShardLabel]; ok != sharded || s != shard {
			return false, nil
		}
	}
	return true, nil
}
