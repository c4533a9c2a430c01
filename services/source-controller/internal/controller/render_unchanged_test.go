package controller_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// notRenderedAgain is what the source-controller logs for an Application a
// commit cannot change.
const notRenderedAgain = "not rendered again: the commit changes no file its last render read"

// loggedNotRenderedAgain reports whether the source-controller logged that
// it left Application ns/name alone at commit.
func loggedNotRenderedAgain(ns, name, commit string) bool {
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, notRenderedAgain) && strings.Contains(line, `"namespace":"`+ns+`"`) &&
			strings.Contains(line, `"name":"`+name+`"`) && strings.Contains(line, commit) {
			return true
		}
	}
	return false
}

func TestNewCommit_ApplicationsItCannotChangeAreNotRenderedAgain(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	files := map[string]string{
		"bases/common/kustomization.yaml": "resources:\n- common.yaml\n",
		"bases/common/common.yaml":        strings.Replace(sharedBase, "%s", "one", 1),
		"apps/shop/kustomization.yaml":    "resources:\n- ../../bases/common\n",
		"README.md":                       "docs\n",
	}
	yamlApps := []string{"edited", "grown", "still", "quiet"}
	for _, name := range yamlApps {
		files["apps/"+name+"/settings.yaml"] = strings.Replace(configMap, "%s", "blue", 1)
	}
	gitRepo, repo := newRepository(t, ns, "platform", files)
	for _, name := range yamlApps {
		newApplication(t, ns, name, repo.Name, "apps/"+name)
	}
	shop := &syncv1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: ns},
		Spec: syncv1.ApplicationSpec{Source: syncv1.ApplicationSource{
			RepositoryRef: syncv1.LocalObjectReference{Name: repo.Name}, Path: "apps/shop",
			Render: syncv1.Render{Type: syncv1.RenderKustomize},
		}},
	}
	if err := k8s.Create(t.Context(), shop); err != nil {
		t.Fatal(err)
	}
	all := append([]string{"shop"}, yamlApps...)
	first := map[string]*syncv1.Application{}
	eventually(t, "every Application rendered", func() bool {
		for _, name := range all {
			app := get(t, &syncv1.Application{}, ns, name)
			if app.Status.DesiredRevision == "" {
				return false
			}
			first[name] = app
		}
		return true
	})

	// One app's file is edited, another gains a file, the base only shop
	// reads (from outside its path) changes, and so does a file no render
	// reads.
	commit, err := gitRepo.Commit(map[string]string{
		"apps/edited/settings.yaml": strings.Replace(configMap, "%s", "green", 1),
		"apps/grown/more.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: more\n",
		"bases/common/common.yaml":  strings.Replace(sharedBase, "%s", "two", 1),
		"README.md":                 "more docs\n",
	}, "edit, grow, rebase")
	if err != nil {
		t.Fatal(err)
	}
	requestFetch(t, get(t, &syncv1.Repository{}, ns, repo.Name))

	changed, unchanged := []string{"edited", "grown", "shop"}, []string{"still", "quiet"}
	eventually(t, "the Applications the commit changes rendered again, the others left alone", func() bool {
		for _, name := range changed {
			if get(t, &syncv1.Application{}, ns, name).Status.SourceCommit != commit {
				return false
			}
		}
		for _, name := range unchanged {
			if !loggedNotRenderedAgain(ns, name, commit) {
				return false
			}
		}
		return true
	})
	for _, name := range changed {
		if app := get(t, &syncv1.Application{}, ns, name); app.Status.DesiredRevision == first[name].Status.DesiredRevision {
			t.Errorf("%s: still Revision %s after a commit that changed what it renders", name, app.Status.DesiredRevision)
		}
	}
	for _, name := range unchanged {
		app := get(t, &syncv1.Application{}, ns, name)
		if app.ResourceVersion != first[name].ResourceVersion || app.Status.SourceCommit != first[name].Status.SourceCommit {
			t.Errorf("%s: status written (sourceCommit %s, resourceVersion %s to %s) for a commit that changes none of its files",
				name, app.Status.SourceCommit, first[name].ResourceVersion, app.ResourceVersion)
		}
		if n := len(revisionsOf(t, ns, name)); n != 1 {
			t.Errorf("%s: %d Revisions, want its first alone", name, n)
		}
	}

	// A later commit is compared with the one the Applications left alone
	// were last checked at: it renders the one whose file it changes, and
	// still leaves the other as first rendered.
	next, err := gitRepo.Commit(map[string]string{"apps/still/settings.yaml": strings.Replace(configMap, "%s", "red", 1)}, "still turns red")
	if err != nil {
		t.Fatal(err)
	}
	requestFetch(t, get(t, &syncv1.Repository{}, ns, repo.Name))
	eventually(t, "the next commit rendered for still, not for quiet", func() bool {
		return get(t, &syncv1.Application{}, ns, "still").Status.SourceCommit == next && loggedNotRenderedAgain(ns, "quiet", next)
	})
	if app := get(t, &syncv1.Application{}, ns, "quiet"); app.ResourceVersion != first["quiet"].ResourceVersion {
		t.Errorf("quiet: status written at commit %s, which changes none of its files", next)
	}
}
