package controller_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/desiredstate"
)

const configMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  color: %s
`

func newApplication(t *testing.T, ns, name, repo, path string) *syncv1.Application {
	t.Helper()
	app := &syncv1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: syncv1.ApplicationSpec{Source: syncv1.ApplicationSource{
			RepositoryRef: syncv1.LocalObjectReference{Name: repo}, Path: path,
		}},
	}
	if err := k8s.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	return app
}

func TestRender_PushProducesExactlyOneNewRevision(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	gitRepo, repo := newRepository(t, ns, "platform", map[string]string{
		"apps/web/settings.yaml": strings.Replace(configMap, "%s", "blue", 1),
	})
	newApplication(t, ns, "web", "platform", "apps/web")

	var first string
	eventually(t, "a first desired Revision", func() bool {
		app := get(t, &syncv1.Application{}, ns, "web")
		first = app.Status.DesiredRevision
		return first != ""
	})
	rev := get(t, &syncv1.Revision{}, ns, first)
	secret := get(t, &corev1.Secret{}, ns, rev.Spec.DesiredState.SecretName)
	if secret.Type != syncv1.DesiredStateSecretType || !metav1.IsControlledBy(secret, rev) {
		t.Fatalf("desired-state Secret type %q, owners %v", secret.Type, secret.OwnerReferences)
	}
	objs, err := desiredstate.Decode(secret.Data[desiredstate.DataKey])
	if err != nil || len(objs) != 1 || objs[0].GetName() != "settings" {
		t.Fatalf("desired state %v, %v", objs, err)
	}
	if _, digest, _ := desiredstate.Encode(objs); digest != rev.Spec.DesiredState.Digest || desiredstate.RevisionName("web", digest) != first {
		t.Fatalf("Revision %s is not named from its digest %s", first, rev.Spec.DesiredState.Digest)
	}

	commit, err := gitRepo.Commit(map[string]string{"apps/web/settings.yaml": strings.Replace(configMap, "%s", "green", 1)}, "green")
	if err != nil {
		t.Fatal(err)
	}
	requestFetch(t, get(t, &syncv1.Repository{}, ns, repo.Name))
	var second string
	eventually(t, "the pushed commit rendered", func() bool {
		app := get(t, &syncv1.Application{}, ns, "web")
		second = app.Status.DesiredRevision
		return app.Status.SourceCommit == commit
	})
	if second == first {
		t.Fatalf("a changed ConfigMap kept Revision %s", first)
	}
	if n := len(revisionsOf(t, ns, "web")); n != 2 {
		t.Fatalf("%d Revisions after one push, want 2", n)
	}

	// A commit that changes a file the Application reads, but none of the
	// objects it renders, reuses the Revision.
	readme, err := gitRepo.Commit(map[string]string{
		"apps/web/settings.yaml": "# the same ConfigMap, commented\n" + strings.Replace(configMap, "%s", "green", 1),
	}, "comment")
	if err != nil {
		t.Fatal(err)
	}
	requestFetch(t, get(t, &syncv1.Repository{}, ns, repo.Name))
	eventually(t, "the comment commit rendered", func() bool {
		return get(t, &syncv1.Application{}, ns, "web").Status.SourceCommit == readme
	})
	if app := get(t, &syncv1.Application{}, ns, "web"); app.Status.DesiredRevision != second {
		t.Fatalf("re-render of the same content moved desiredRevision to %s", app.Status.DesiredRevision)
	}
	if n := len(revisionsOf(t, ns, "web")); n != 2 {
		t.Fatalf("%d Revisions after a commit that changes no object, want 2", n)
	}
	// The spec is immutable: it keeps the first commit that rendered it.
	if rev := get(t, &syncv1.Revision{}, ns, second); rev.Spec.Source == nil || rev.Spec.Source.Commit != commit {
		t.Fatalf("Revision %s source %+v, want the first commit that rendered it, %s", second, rev.Spec.Source, commit)
	}
}

// renderFailureRecord waits for the Application's desired Revision to be a
// Revision other than previous that records a render failure: no desired
// state, spec.renderFailure and spec.source set, and no status (the
// sync-controller, not running here, records its phase).
func renderFailureRecord(t *testing.T, ns, app, previous string) *syncv1.Revision {
	t.Helper()
	var name string
	eventually(t, "a Revision recording the render failure", func() bool {
		name = get(t, &syncv1.Application{}, ns, app).Status.DesiredRevision
		return name != "" && name != previous
	})
	rev := get(t, &syncv1.Revision{}, ns, name)
	if rev.Spec.DesiredState != (syncv1.DesiredStateRef{}) || rev.Spec.RenderFailure == nil ||
		rev.Spec.Source == nil || rev.Spec.Source.Commit == "" || !equality.Semantic.DeepEqual(rev.Status, syncv1.RevisionStatus{}) {
		t.Fatalf("desired Revision %s after a failed render: desired state %+v, render failure %+v, source %+v, status %+v; want none, set, the commit, none",
			name, rev.Spec.DesiredState, rev.Spec.RenderFailure, rev.Spec.Source, rev.Status)
	}
	return rev
}

// TestRender_FailureIsAFailedRevision: a commit that does not render
// becomes a Failed Revision with nothing to apply; the Revision rendered
// before stays.
func TestRender_FailureIsAFailedRevision(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	gitRepo, repo := newRepository(t, ns, "platform", map[string]string{
		"apps/web/settings.yaml": strings.Replace(configMap, "%s", "blue", 1),
	})
	newApplication(t, ns, "web", "platform", "apps/web")
	var good string
	eventually(t, "a first desired Revision", func() bool {
		good = get(t, &syncv1.Application{}, ns, "web").Status.DesiredRevision
		return good != ""
	})

	if _, err := gitRepo.Commit(map[string]string{"apps/web/broken.yaml": "kind: [unclosed\n"}, "broken"); err != nil {
		t.Fatal(err)
	}
	requestFetch(t, get(t, &syncv1.Repository{}, ns, repo.Name))
	var cond *metav1.Condition
	eventually(t, "Rendered=False", func() bool {
		app := get(t, &syncv1.Application{}, ns, "web")
		cond = meta.FindStatusCondition(app.Status.Conditions, syncv1.ConditionRendered)
		return cond != nil && cond.Status == metav1.ConditionFalse
	})
	if cond.Reason != syncv1.ReasonRenderFailed || !strings.Contains(cond.Message, "apps/web/broken.yaml") {
		t.Fatalf("condition %s: %s, want RenderFailed naming the file", cond.Reason, cond.Message)
	}
	failed := renderFailureRecord(t, ns, "web", good)
	if f := failed.Spec.RenderFailure; f.Reason != syncv1.ReasonRenderFailed || !strings.Contains(f.Message, "apps/web/broken.yaml") {
		t.Fatalf("failed Revision's spec.renderFailure %s: %s, want RenderFailed naming the file", f.Reason, f.Message)
	}
	if n := len(revisionsOf(t, ns, "web")); n != 2 {
		t.Fatalf("%d Revisions after a good and a failed render, want 2", n)
	}
	if rev := get(t, &syncv1.Revision{}, ns, good); rev.Spec.DesiredState.SecretName == "" {
		t.Fatalf("the Revision rendered before lost its desired state")
	}
	var events corev1.EventList
	eventually(t, "a RenderFailed Warning Event", func() bool {
		if err := k8s.List(t.Context(), &events, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		for _, e := range events.Items {
			if e.Reason == syncv1.ReasonRenderFailed && e.Type == corev1.EventTypeWarning {
				return true
			}
		}
		return false
	})
}

func TestRepository_UnlabelledCredentialsAreRefused(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: ns},
		StringData: map[string]string{"username": "git", "password": "s3cret-token"},
	}
	if err := k8s.Create(t.Context(), secret); err != nil {
		t.Fatal(err)
	}
	gitRepo, err := git.CreateRepo(ns + "/private")
	if err != nil {
		t.Fatal(err)
	}
	repo := &syncv1.Repository{
		ObjectMeta: metav1.ObjectMeta{Name: "private", Namespace: ns},
		Spec: syncv1.RepositorySpec{Git: syncv1.GitSource{
			URL: gitRepo.URL(), SecretRef: &syncv1.LocalObjectReference{Name: "creds"},
		}},
	}
	if err := k8s.Create(t.Context(), repo); err != nil {
		t.Fatal(err)
	}
	var cond *metav1.Condition
	eventually(t, "Ready=False", func() bool {
		r := get(t, &syncv1.Repository{}, ns, "private")
		cond = meta.FindStatusCondition(r.Status.Conditions, syncv1.ConditionReady)
		return cond != nil && cond.Status == metav1.ConditionFalse
	})
	if cond.Reason != syncv1.ReasonCredentialsRefused || !strings.Contains(cond.Message, syncv1.GitCredentialsLabel) {
		t.Fatalf("condition %s: %s, want CredentialsRefused naming the label", cond.Reason, cond.Message)
	}
	if strings.Contains(cond.Message, "s3cret-token") {
		t.Fatal("the condition leaks the credential")
	}
}
