package controller_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/desiredstate"
	testgit "github.com/kuvryn/kuvryn-sync/pkg/testkit/git"
	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/render"
)

// billionLaughs nests nine aliases nine deep: 9^9 strings once expanded.
const billionLaughs = `apiVersion: v1
kind: ConfigMap
metadata: {name: laughs}
data:
  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
  b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
  c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
  d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
  e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
  f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
  g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
  h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
  i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
`

// hostileCase is one Application of the hostile tree and the refusal it
// must get.
type hostileCase struct {
	name, app, path string
	render          syncv1.RenderType
	// apiRefusal is what the API server answers when it refuses to store
	// the Application at all; reason and wants are then unused.
	apiRefusal string
	reason     string
	wants      []string
}

// checkRefused asserts that app was refused with reason and a bounded
// message naming each of wants, and that nothing was made applicable: its
// one Revision is a Failed record without desired state, no desired-state
// Secret exists for it, and a Warning Event says why.
func checkRefused(t *testing.T, ns, app, reason string, wants ...string) {
	t.Helper()
	checkMessage(t, renderedFalse(t, ns, app, reason).Message, wants...)
	renderFailureRecord(t, ns, app, "")
	if revs := revisionsOf(t, ns, app); len(revs) != 1 {
		t.Fatalf("%d Revisions for a refused Application, want the one Failed record", len(revs))
	}
	checkNoDesiredState(t, ns, app)
	eventually(t, "a "+reason+" Warning Event for "+app, func() bool {
		var events corev1.EventList
		if err := k8s.List(t.Context(), &events, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		for _, e := range events.Items {
			if e.InvolvedObject.Name == app && e.Type == corev1.EventTypeWarning && e.Reason == reason {
				checkMessage(t, e.Message, wants...)
				return true
			}
		}
		return false
	})
}

// renderedFalse waits for app's Rendered condition to be False with a
// final reason, and fails unless that reason is reason.
func renderedFalse(t *testing.T, ns, app, reason string) *metav1.Condition {
	t.Helper()
	var cond *metav1.Condition
	eventually(t, "Rendered=False on "+app, func() bool {
		a := get(t, &syncv1.Application{}, ns, app)
		cond = meta.FindStatusCondition(a.Status.Conditions, syncv1.ConditionRendered)
		return cond != nil && cond.Status == metav1.ConditionFalse && cond.Reason != syncv1.ReasonProgressing
	})
	if cond.Reason != reason {
		t.Fatalf("Rendered reason %s: %s; want %s", cond.Reason, cond.Message, reason)
	}
	return cond
}

// checkNoDesiredState fails if a desired-state Secret exists for app.
func checkNoDesiredState(t *testing.T, ns, app string) {
	t.Helper()
	var secrets corev1.SecretList
	if err := k8s.List(t.Context(), &secrets, client.InNamespace(ns), client.MatchingLabels{syncv1.ApplicationLabel: app}); err != nil {
		t.Fatal(err)
	}
	if len(secrets.Items) != 0 {
		t.Fatalf("desired-state Secret %s exists for a refused Application", secrets.Items[0].Name)
	}
}

// checkMessage asserts a refusal message names each of wants, is bounded
// and names no local directory of the source-controller.
func checkMessage(t *testing.T, msg string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(msg, w) {
			t.Errorf("message %q does not name %q", msg, w)
		}
	}
	if len(msg) > syncv1.MaxMessageBytes {
		t.Errorf("message is %d bytes, over the %d byte bound", len(msg), syncv1.MaxMessageBytes)
	}
	if strings.Contains(msg, cacheDir) {
		t.Errorf("message %q names the source cache directory", msg)
	}
}

func TestHostileGitTree_EveryApplicationIsRefusedAndNothingRenders(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	gitRepo, err := git.CreateRepo(ns + "/hostile")
	if err != nil {
		t.Fatal(err)
	}
	// Identical blobs: the repository stays small while a checkout of
	// many/ holds more than a render may read.
	chunk := strings.Repeat("# "+strings.Repeat("x", 61)+"\n", 1024)
	changes := []testgit.Change{
		testgit.File("ok/settings.yaml", strings.Replace(configMap, "%s", "blue", 1)),
		testgit.File("shared/linked.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: linked}\n"),
		testgit.Symlink("ok/linked.yaml", "../shared/linked.yaml"),
		testgit.File("outside/stolen.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: stolen}\n"),
		testgit.Symlink("link-out/leak.yaml", "../../../../../../etc/passwd"),
		testgit.Symlink("link-abs/leak.yaml", "/etc/hostname"),
		testgit.Symlink("link-dir/etc", "/etc"),
		testgit.File("kustomize-abs/kustomization.yaml", "resources:\n- /etc/passwd\n"),
		testgit.File("kustomize-up/kustomization.yaml", "resources:\n- ../../../../../../etc/passwd\n"),
		testgit.Symlink("kustomize-link/kustomization.yaml", "/etc/passwd"),
		testgit.File("bomb/laughs.yaml", billionLaughs),
		testgit.File("dup/dup.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dup}\ndata: {color: blue, color: red}\n"),
		testgit.File("latin1/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: latin}\ndata: {drink: caf\xe9}\n"),
		testgit.File("huge/huge.yaml", strings.Repeat(chunk, render.MaxInputBytes/len(chunk)+1)),
	}
	for i := range render.MaxInputBytes/len(chunk) + 1 {
		changes = append(changes, testgit.File(fmt.Sprintf("many/f%04d.yaml", i), chunk))
	}
	if _, err := gitRepo.Apply(testgit.DefaultBranch, "hostile tree", changes...); err != nil {
		t.Fatal(err)
	}
	repo := &syncv1.Repository{
		ObjectMeta: metav1.ObjectMeta{Name: "hostile", Namespace: ns},
		Spec: syncv1.RepositorySpec{
			Git:          syncv1.GitSource{URL: gitRepo.URL(), Revision: testgit.DefaultBranch},
			PollInterval: &metav1.Duration{Duration: time.Hour},
		},
	}
	if err := k8s.Create(t.Context(), repo); err != nil {
		t.Fatal(err)
	}

	outside := "leads outside the repository"
	budget := fmt.Sprintf("past %d bytes of input", render.MaxInputBytes)
	cases := []hostileCase{
		{name: "source path climbing out with ..", app: "dotdot", path: "ok/../../outside", apiRefusal: "spec.source.path: Invalid value: \"ok/../../outside\": must not contain '..'"},
		{name: "relative symlink out of the repository", app: "link-out", path: "link-out", reason: syncv1.ReasonValidationFailure, wants: []string{"link-out/leak.yaml: symlink " + outside}},
		{name: "absolute symlink to a file", app: "link-abs", path: "link-abs", reason: syncv1.ReasonValidationFailure, wants: []string{"link-abs/leak.yaml: symlink " + outside}},
		{name: "source path through an absolute directory symlink", app: "link-dir", path: "link-dir/etc", reason: syncv1.ReasonValidationFailure, wants: []string{"link-dir/etc: symlink " + outside}},
		{name: "absolute path in a kustomization", app: "kustomize-abs", path: "kustomize-abs", render: syncv1.RenderKustomize, reason: syncv1.ReasonValidationFailure, wants: []string{`kustomize-abs/kustomization.yaml: resources entry "/etc/passwd": path is outside the repository`}},
		{name: "kustomization resource climbing out", app: "kustomize-up", path: "kustomize-up", render: syncv1.RenderKustomize, reason: syncv1.ReasonValidationFailure, wants: []string{`kustomize-up/kustomization.yaml: resources entry "../../../../../../etc/passwd": path is outside the repository`}},
		{name: "kustomization is an absolute symlink", app: "kustomize-link", path: "kustomize-link", render: syncv1.RenderKustomize, reason: syncv1.ReasonValidationFailure, wants: []string{"kustomize-link/kustomization.yaml: symlink " + outside}},
		{name: "billion laughs anchors", app: "bomb", path: "bomb", reason: syncv1.ReasonRenderFailed, wants: []string{"bomb/laughs.yaml: document 1 is not valid YAML"}},
		{name: "duplicate keys", app: "dup", path: "dup", reason: syncv1.ReasonRenderFailed, wants: []string{"dup/dup.yaml: document 1 is not valid YAML", "color"}},
		{name: "non-UTF-8 bytes", app: "latin1", path: "latin1", reason: syncv1.ReasonRenderFailed, wants: []string{"latin1/cm.yaml"}},
		{name: "one file over the input budget", app: "huge", path: "huge", reason: syncv1.ReasonRenderFailed, wants: []string{"huge/huge.yaml", budget}},
		{name: "many files together over the input budget", app: "many", path: "many", reason: syncv1.ReasonRenderFailed, wants: []string{"many/f", budget}},
	}
	for _, tc := range append(cases, hostileCase{app: "ok", path: "ok"}) {
		app := &syncv1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: tc.app, Namespace: ns},
			Spec: syncv1.ApplicationSpec{Source: syncv1.ApplicationSource{
				RepositoryRef: syncv1.LocalObjectReference{Name: repo.Name}, Path: tc.path,
				Render: syncv1.Render{Type: tc.render},
			}},
		}
		err := k8s.Create(t.Context(), app)
		switch {
		case tc.apiRefusal == "" && err != nil:
			t.Fatal(err)
		case tc.apiRefusal != "" && (err == nil || !strings.Contains(err.Error(), tc.apiRefusal)):
			t.Fatalf("creating Application %s: %v, want the API server to refuse %q", tc.app, err, tc.apiRefusal)
		}
	}

	// The same checkout renders a well-formed path, with a symlink that stays
	// inside followed: the refusals below are about each path's content.
	t.Run("symlink inside the repository is followed", func(t *testing.T) {
		var name string
		eventually(t, "a desired Revision for ok", func() bool {
			name = get(t, &syncv1.Application{}, ns, "ok").Status.DesiredRevision
			return name != ""
		})
		rev := get(t, &syncv1.Revision{}, ns, name)
		if rev.Spec.DesiredState.SecretName == "" {
			t.Fatalf("ok did not render: %+v", rev.Spec.RenderFailure)
		}
		objs, err := desiredstate.Decode(get(t, &corev1.Secret{}, ns, rev.Spec.DesiredState.SecretName).Data[desiredstate.DataKey])
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, o := range objs {
			names = append(names, o.GetName())
		}
		if strings.Join(names, ",") != "linked,settings" && strings.Join(names, ",") != "settings,linked" {
			t.Fatalf("ok rendered %v, want linked and settings", names)
		}
	})
	var refused int
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.apiRefusal != "" {
				if err := k8s.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: tc.app}, &syncv1.Application{}); !apierrors.IsNotFound(err) {
					t.Fatalf("Application %s after the API server refused it: %v, want NotFound", tc.app, err)
				}
			} else {
				checkRefused(t, ns, tc.app, tc.reason, tc.wants...)
			}
			if revs := revisionsOf(t, ns, tc.app); tc.apiRefusal != "" && len(revs) != 0 {
				t.Fatalf("%d Revisions for an Application the API server refused", len(revs))
			}
			refused++
		})
	}
	t.Logf("hostile Git tree: %d inputs tried, %d refused", len(cases), refused)
}

// TestHostileGitTree_RepositoryWideRefusalsCreateNoApplication covers what
// is refused for the whole Repository, before any Application renders: a
// tree too deep to check out and .ksync.yaml files that name what lies
// outside the repository.
func TestHostileGitTree_RepositoryWideRefusalsCreateNoApplication(t *testing.T) {
	t.Parallel()
	declares := func(path string) string {
		return "applications:\n- metadata: {name: aaa}\n  spec: {source: {path: apps}}\n- metadata: {name: zzz}\n  spec: {source: {path: " + path + "}}\n"
	}
	apps := testgit.File("apps/settings.yaml", strings.Replace(configMap, "%s", "blue", 1))
	cases := []struct {
		name    string
		changes []testgit.Change
		wants   []string
	}{
		{
			name:    "tree nested deeper than a checkout goes",
			changes: []testgit.Change{apps, testgit.File(strings.Repeat("d/", 300)+"cm.yaml", configMap)},
			wants:   []string{"nested deeper than 256 directories"},
		},
		{
			name:    ".ksync.yaml naming a path climbing out",
			changes: []testgit.Change{apps, testgit.File(".ksync.yaml", declares("../outside"))},
			wants:   []string{".ksync.yaml", "zzz", "must not contain '..'"},
		},
		{
			name:    ".ksync.yaml naming an absolute path",
			changes: []testgit.Change{apps, testgit.File(".ksync.yaml", declares("/etc"))},
			wants:   []string{".ksync.yaml", "zzz", "must be a relative path"},
		},
		{
			name:    ".ksync.yaml is a symlink out of the repository",
			changes: []testgit.Change{apps, testgit.Symlink(".ksync.yaml", "/etc/passwd")},
			wants:   []string{".ksync.yaml"},
		},
		{
			name:    ".ksync.yaml over its size bound",
			changes: []testgit.Change{apps, testgit.File(".ksync.yaml", declares("apps")+strings.Repeat("#\n", 1<<19+1))},
			wants:   []string{".ksync.yaml: larger than 1048576 bytes"},
		},
	}
	var refused int
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// A namespace each: a half-applied discovery must not hide
			// behind a name clash with the case before.
			ns := newNamespace(t)
			name := fmt.Sprintf("tree-%d", i)
			gitRepo, err := git.CreateRepo(ns + "/" + name)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := gitRepo.Apply(testgit.DefaultBranch, tc.name, tc.changes...); err != nil {
				t.Fatal(err)
			}
			repo := &syncv1.Repository{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
				Spec:       syncv1.RepositorySpec{Git: syncv1.GitSource{URL: gitRepo.URL(), Revision: testgit.DefaultBranch}},
			}
			if err := k8s.Create(t.Context(), repo); err != nil {
				t.Fatal(err)
			}
			var ready *metav1.Condition
			eventually(t, "Ready=False on "+name, func() bool {
				ready = meta.FindStatusCondition(get(t, &syncv1.Repository{}, ns, name).Status.Conditions, syncv1.ConditionReady)
				return ready != nil && ready.Status == metav1.ConditionFalse
			})
			if ready.Reason != syncv1.ReasonDiscoveryFailed {
				t.Fatalf("Ready reason %s: %s; want %s", ready.Reason, ready.Message, syncv1.ReasonDiscoveryFailed)
			}
			checkMessage(t, ready.Message, tc.wants...)
			var list syncv1.ApplicationList
			if err := k8s.List(t.Context(), &list, client.InNamespace(ns)); err != nil {
				t.Fatal(err)
			}
			if len(list.Items) != 0 {
				t.Fatalf("Application %s discovered from a refused Repository", list.Items[0].Name)
			}
			refused++
		})
	}
	t.Logf("hostile repository trees: %d inputs tried, %d refused", len(cases), refused)
}
