package controller_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/controller"
)

// sharedBase is a Kustomize base every app of appFiles builds on.
const sharedBase = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: common\ndata:\n  tier: %s\n"

// appFiles lays out n Kustomize Applications, one directory each with its
// ConfigMap, all building on the base in bases/common: a commit that
// changes the base changes every one of them.
func appFiles(n int, color func(i int) string) map[string]string {
	files := map[string]string{
		"bases/common/kustomization.yaml": "resources:\n- common.yaml\n",
		"bases/common/common.yaml":        strings.Replace(sharedBase, "%s", "one", 1),
	}
	for i := range n {
		files[fmt.Sprintf("apps/app-%03d/kustomization.yaml", i)] = "resources:\n- settings.yaml\n- ../../bases/common\n"
		files[fmt.Sprintf("apps/app-%03d/settings.yaml", i)] = strings.Replace(configMap, "%s", color(i), 1)
	}
	return files
}

// renderOrder watches the Applications of ns and returns their names in the
// order they were rendered at commit, once n of them have been.
func renderOrder(t *testing.T, ns string, n int, push func() string) []string {
	t.Helper()
	var list syncv1.ApplicationList
	if err := k8s.List(t.Context(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	w, err := k8s.Watch(ctx, &syncv1.ApplicationList{}, client.InNamespace(ns),
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	commit := push()
	var order []string
	for ev := range w.ResultChan() {
		app, ok := ev.Object.(*syncv1.Application)
		if !ok || ev.Type != watch.Modified || app.Status.SourceCommit != commit || slices.Contains(order, app.Name) {
			continue
		}
		if order = append(order, app.Name); len(order) == n {
			return order
		}
	}
	t.Fatalf("%d of %d Applications rendered at commit %s before the watch ended: %v", len(order), n, commit, order)
	return nil
}

func createApplications(t *testing.T, ns, repo string, n int) {
	t.Helper()
	for i := range n {
		app := &syncv1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%03d", i), Namespace: ns},
			Spec: syncv1.ApplicationSpec{Source: syncv1.ApplicationSource{
				RepositoryRef: syncv1.LocalObjectReference{Name: repo}, Path: fmt.Sprintf("apps/app-%03d", i),
				Render: syncv1.Render{Type: syncv1.RenderKustomize},
			}},
		}
		if err := k8s.Create(t.Context(), app); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, fmt.Sprintf("%d Applications rendered", n), func() bool {
		var list syncv1.ApplicationList
		if err := k8s.List(t.Context(), &list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		return len(list.Items) == n && !slices.ContainsFunc(list.Items, func(a syncv1.Application) bool {
			return a.Status.DesiredRevision == ""
		})
	})
}

func TestNewCommit_ApplicationsWithChangedFilesAreRenderedFirst(t *testing.T) {
	t.Parallel()
	const n = 100
	ns := newNamespace(t)
	gitRepo, repo := newRepository(t, ns, "platform", appFiles(n, func(int) string { return "blue" }))
	createApplications(t, ns, repo.Name, n)

	// The commit changes the base all hundred build on, so every one renders
	// again. Queued alike, the three whose own directory changed would render
	// anywhere among the hundred, in the order the cache lists them.
	changed := []string{"app-033", "app-066", "app-099"}
	order := renderOrder(t, ns, n, func() string {
		files := map[string]string{"bases/common/common.yaml": strings.Replace(sharedBase, "%s", "two", 1)}
		for _, app := range changed {
			files["apps/"+app+"/settings.yaml"] = strings.Replace(configMap, "%s", "green", 1)
		}
		commit, err := gitRepo.Commit(files, "three apps turn green")
		if err != nil {
			t.Fatal(err)
		}
		requestFetch(t, get(t, &syncv1.Repository{}, ns, repo.Name))
		return commit
	})
	// They are taken first, but the --concurrent renders beside them finish
	// sooner: an unchanged Application's render writes two statuses, a
	// changed one's also creates a Revision and its desired-state Secret.
	within := 3 * controller.DefaultConcurrent
	for _, app := range changed {
		if i := slices.Index(order, app); i >= within {
			t.Fatalf("%s, which the commit changed, was rendered %dth of %d, want within the first %d: %v", app, i+1, n, within, order[:i+1])
		}
	}
}

func TestNewCommit_EveryApplicationIsEnqueuedWhenTheChangeCannotBeTold(t *testing.T) {
	t.Parallel()
	const n = 5
	ns := newNamespace(t)
	_, repo := newRepository(t, ns, "platform", appFiles(n, func(int) string { return "blue" }))
	createApplications(t, ns, repo.Name, n)

	// A new URL is a new clone that lacks the old commit: which files changed
	// cannot be told, so every Application renders the new commit.
	moved, err := git.CreateRepo(ns + "/platform-moved")
	if err != nil {
		t.Fatal(err)
	}
	order := renderOrder(t, ns, n, func() string {
		commit, err := moved.Commit(appFiles(n, func(i int) string { return map[bool]string{true: "green", false: "blue"}[i == 0] }), "moved")
		if err != nil {
			t.Fatal(err)
		}
		r := get(t, &syncv1.Repository{}, ns, repo.Name)
		patch := client.MergeFrom(r.DeepCopy())
		r.Spec.Git.URL = moved.URL()
		if err := k8s.Patch(t.Context(), r, patch); err != nil {
			t.Fatal(err)
		}
		return commit
	})
	if len(order) != n {
		t.Fatalf("rendered at the moved repository's commit: %v, want all %d Applications", order, n)
	}
}
