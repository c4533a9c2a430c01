package controller_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestRender_WritesNoRevisionStatus: the source-controller records all it
// knows of a render in the Revision's spec when it creates it, for a commit
// that renders as for one that fails to, and writes no Revision status:
// managedFields hold its create and no status write of it. A routine render
// emits no Event; a failure's Warning Event, emitted after it by the same
// recorder, shows the render's would have been recorded by then.
func TestRender_WritesNoRevisionStatus(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		files   map[string]string
		failure string // the reason spec.renderFailure holds; empty for a render
	}{
		{name: "a commit that renders", files: map[string]string{"apps/web/settings.yaml": strings.Replace(configMap, "%s", "blue", 1)}},
		{name: "a commit that fails to render", files: map[string]string{"apps/web/broken.yaml": "kind: [unclosed\n"}, failure: syncv1.ReasonRenderFailed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := newNamespace(t)
			gitRepo, _ := newRepository(t, ns, "platform", tc.files)
			before := metav1.Now().Rfc3339Copy()
			newApplication(t, ns, "web", "platform", "apps/web")
			var app *syncv1.Application
			eventually(t, "a desired Revision", func() bool {
				app = get(t, &syncv1.Application{}, ns, "web")
				return app.Status.DesiredRevision != ""
			})
			head := get(t, &syncv1.Repository{}, ns, "platform").Status.Artifact.Commit
			rev := get(t, &syncv1.Revision{}, ns, app.Status.DesiredRevision)

			if src := rev.Spec.Source; src == nil || src.Commit != head || src.Commit != app.Status.SourceCommit ||
				src.Path != "apps/web" || src.RenderedAt.Before(&before) {
				t.Fatalf("Revision %s spec.source %+v, want commit %s, path apps/web, rendered at or after %s", rev.Name, src, head, before)
			}
			switch f := rev.Spec.RenderFailure; {
			case tc.failure == "" && (f != nil || rev.Spec.DesiredState.SecretName == ""):
				t.Fatalf("Revision %s: render failure %+v, desired state %+v; want a desired state", rev.Name, f, rev.Spec.DesiredState)
			case tc.failure != "" && (f == nil || f.Reason != tc.failure || !strings.Contains(f.Message, "apps/web/broken.yaml") || rev.Spec.DesiredState.SecretName != ""):
				t.Fatalf("Revision %s: render failure %+v, desired state %+v; want %s naming apps/web/broken.yaml and no desired state",
					rev.Name, f, rev.Spec.DesiredState, tc.failure)
			}
			if !equality.Semantic.DeepEqual(rev.Status, syncv1.RevisionStatus{}) {
				t.Fatalf("Revision %s has status %+v; the source-controller writes none", rev.Name, rev.Status)
			}
			created := false
			for _, m := range rev.ManagedFields {
				if m.Manager != syncv1.FieldManagerSource {
					continue
				}
				if m.Subresource == "status" {
					t.Fatalf("Revision %s managedFields hold a status write by %s: %+v", rev.Name, m.Manager, m)
				}
				created = m.Subresource == "" && m.Operation == metav1.ManagedFieldsOperationUpdate
			}
			if !created {
				t.Fatalf("Revision %s managedFields %+v do not name %s as its creator", rev.Name, rev.ManagedFields, syncv1.FieldManagerSource)
			}

			if tc.failure == "" {
				// A later commit that fails to render: its Warning Event
				// follows the render's, had there been one.
				if _, err := gitRepo.Commit(map[string]string{"apps/web/broken.yaml": "kind: [unclosed\n"}, "broken"); err != nil {
					t.Fatal(err)
				}
				requestFetch(t, get(t, &syncv1.Repository{}, ns, "platform"))
			}
			var events corev1.EventList
			eventually(t, "the render failure's Warning Event", func() bool {
				if err := k8s.List(t.Context(), &events, client.InNamespace(ns)); err != nil {
					t.Fatal(err)
				}
				for _, e := range events.Items {
					if e.InvolvedObject.Name == "web" && e.Type == corev1.EventTypeWarning && e.Reason == syncv1.ReasonRenderFailed {
						return true
					}
				}
				return false
			})
			for _, e := range events.Items {
				if e.Type == corev1.EventTypeNormal {
					t.Errorf("a render emitted the Normal Event %s %s: %s", e.Reason, e.InvolvedObject.Name, e.Message)
				}
			}
		})
	}
}
