package controller

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/githost"
)

// The preview tests' fixtures: a Repository with previews reporting to a
// github or gitlab sink on a fake host, and preview Revisions whose status
// the tests write as the sync-controller would.

const (
	hostToken = "glpat-s3cretT0KEN"
	commitA   = "aaaaaaaaaaaa0123456789abcdef0123456789ab"
	commitB   = "bbbbbbbbbbbb0123456789abcdef0123456789ab"
)

// createPreviewSink creates a Secret holding url and token and a sink of typ reading it.
func (e *testEnv) createPreviewSink(name string, typ syncv1.SinkType, url, token string) {
	e.t.Helper()
	must(e.t, admin.Create(e.t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name + "-sink"},
		StringData: map[string]string{"url": url, "token": token}}))
	must(e.t, admin.Create(e.t.Context(), &syncv1.NotificationSink{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Spec:       syncv1.NotificationSinkSpec{Type: typ, SecretRef: syncv1.LocalObjectReference{Name: name + "-sink"}},
	}))
}

// createPreviewRepository creates Repository name previewing the pull or
// merge requests of provider into sink.
func (e *testEnv) createPreviewRepository(name string, provider syncv1.PreviewProvider, sink string) {
	e.t.Helper()
	must(e.t, admin.Create(e.t.Context(), &syncv1.Repository{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Spec: syncv1.RepositorySpec{
			Git:      syncv1.GitSource{URL: "https://git.example.com/shop/deploy.git"},
			Previews: &syncv1.PreviewsSpec{PullRequests: provider, SinkRef: &syncv1.LocalObjectReference{Name: sink}},
		},
	}))
}

// createPreviewRevision creates the preview Revision of app for preview at
// commit, as the source-controller does.
func (e *testEnv) createPreviewRevision(repo, preview, app, name, commit string, withheld ...string) {
	e.t.Helper()
	must(e.t, admin.Create(e.t.Context(), &syncv1.Revision{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name, Labels: map[string]string{
			syncv1.PreviewLabel: preview, syncv1.RepositoryLabel: repo, syncv1.ApplicationLabel: app}},
		Spec: syncv1.RevisionSpec{
			ApplicationName: app,
			DesiredState:    syncv1.DesiredStateRef{SecretName: name, Digest: "sha256:" + strings.Repeat("ef", 32), Objects: 2},
			Preview:         &syncv1.RevisionPreview{Name: preview, Repository: repo, Ref: "refs/pull/12/head", Commit: commit, Withheld: withheld},
		},
	}))
}

// previewPlan is a preview's plan: the Deployment's image changes and a
// Secret, redacted, is added.
var previewPlan = &syncv1.Plan{
	Digest: "sha256:" + strings.Repeat("12", 32), PlannedAt: metav1.Now(),
	Summary: syncv1.PlanSummary{Create: 1, Update: 1, Unchanged: 1},
	Entries: []syncv1.PlanEntry{
		{ObjectRef: syncv1.ObjectRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "api"}, Action: syncv1.ActionUpdate,
			Diff: "--- live\n+++ desired\n-        image: shop/api:1.0\n+        image: shop/api:1.1\n"},
		{ObjectRef: syncv1.ObjectRef{Version: "v1", Kind: "Secret", Namespace: "shop", Name: "api-db"}, Action: syncv1.ActionCreate,
			Diff: "+data:\n+  password: " + syncv1.RedactedMarker + "\n"},
		{ObjectRef: syncv1.ObjectRef{Version: "v1", Kind: "Service", Namespace: "shop", Name: "api"}, Action: syncv1.ActionUnchanged},
	},
}

func previewPlanned() *syncv1.RevisionStatus {
	return &syncv1.RevisionStatus{Phase: syncv1.PhasePlanned, Plan: previewPlan,
		Conditions: []metav1.Condition{cond(syncv1.ConditionPlanned, true, syncv1.ReasonSucceeded, "planned")}}
}

func previewFailed(reason, msg string) *syncv1.RevisionStatus {
	return &syncv1.RevisionStatus{Phase: syncv1.PhaseFailed,
		Conditions: []metav1.Condition{cond(syncv1.ConditionPlanned, false, reason, msg)},
		Diagnosis: &syncv1.Diagnosis{Summary: "the Deployment is invalid", Causes: []syncv1.Cause{{Chain: []syncv1.CauseLink{
			{ObjectRef: syncv1.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web"}, Message: "spec.replicas must be at least 0"}}}}},
	}
}

// ours are the comments of number the controller wrote.
func ours(h *githost.Host, number int) []githost.Comment {
	var out []githost.Comment
	for _, c := range h.Comments(number) {
		if c.Author == githost.Author {
			out = append(out, c)
		}
	}
	return out
}
