package controller_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/cachepruner"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/chart"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/gitrepo"
)

func TestCachePrune_KeepsReferencedCheckoutsAndLogsCounts(t *testing.T) {
	ns := newNamespace(t)
	gitRepo, repo := newRepository(t, ns, "platform", map[string]string{
		"apps/web/settings.yaml": strings.Replace(configMap, "%s", "blue", 1),
	})
	newApplication(t, ns, "web", "platform", "apps/web")
	var first string
	eventually(t, "a first render", func() bool {
		first = get(t, &syncv1.Application{}, ns, "web").Status.SourceCommit
		return first != ""
	})
	second, err := gitRepo.Commit(map[string]string{"apps/web/settings.yaml": strings.Replace(configMap, "%s", "green", 1)}, "green")
	if err != nil {
		t.Fatal(err)
	}
	requestFetch(t, get(t, &syncv1.Repository{}, ns, repo.Name))
	eventually(t, "the second render", func() bool {
		return get(t, &syncv1.Application{}, ns, "web").Status.SourceCommit == second
	})
	checkout := func(commit string) string {
		return filepath.Join(cacheDir, "git", "checkouts", ns, "platform", commit)
	}
	for _, c := range []string{first, second} {
		if _, err := os.Stat(checkout(c)); err != nil {
			t.Fatalf("checkout of %s: %v", c, err)
		}
	}

	// The first Revision leaves: its checkout is no longer referenced.
	rev := get(t, &syncv1.Revision{}, ns, desiredRevisionAt(t, ns, first))
	if err := k8s.Delete(t.Context(), rev); err != nil {
		t.Fatal(err)
	}
	var lines []string
	p := &cachepruner.Pruner{
		Client: k8s,
		Git:    &gitrepo.Cache{Dir: filepath.Join(cacheDir, "git")},
		Charts: &chart.Puller{Dir: filepath.Join(cacheDir, "charts")},
		Log:    funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{}),
	}
	eventually(t, "the deleted Revision gone from the API", func() bool {
		return k8s.Get(t.Context(), client.ObjectKeyFromObject(rev), rev) != nil
	})
	if err := p.Prune(t.Context(), time.Now().Add(2*cachepruner.CloneUnusedFor)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(checkout(first)); !os.IsNotExist(err) {
		t.Errorf("checkout of the unreferenced commit %s survived the prune: %v", first, err)
	}
	if _, err := os.Stat(checkout(second)); err != nil {
		t.Errorf("checkout of the fetched commit %s was pruned: %v", second, err)
	}
	logged := strings.Join(lines, "\n")
	for _, want := range []string{`"msg"="Pruned Git source cache"`, `"msg"="Pruned Helm chart cache"`, `"checkouts"=`} {
		if !strings.Contains(logged, want) {
			t.Errorf("prune log %q lacks %s", logged, want)
		}
	}
}

// desiredRevisionAt finds the Revision rendered from commit.
func desiredRevisionAt(t *testing.T, ns, commit string) string {
	t.Helper()
	for _, r := range revisionsOf(t, ns, "web") {
		if r.Spec.Source != nil && r.Spec.Source.Commit == commit {
			return r.Name
		}
	}
	t.Fatalf("no Revision rendered from %s", commit)
	return ""
}
