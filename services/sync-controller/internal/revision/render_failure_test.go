package revision

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/ssa"
)

// publishRenderFailure does what the source-controller does when a commit
// fails to render: a Revision without a desired state, whose
// spec.renderFailure says why, becomes the desired one. It writes no
// Revision status: the sync-controller records it Failed.
func (e *testEnv) publishRenderFailure(app, name, reason, message string) {
	e.t.Helper()
	ctx := e.t.Context()
	commit := strings.Repeat("c", 40)
	rev := &syncv1.Revision{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name, Labels: map[string]string{syncv1.ApplicationLabel: app}},
		Spec: syncv1.RevisionSpec{
			ApplicationName: app,
			Source:          &syncv1.RevisionSource{Commit: commit, RenderedAt: metav1.Now()},
			RenderFailure:   &syncv1.RenderFailure{Reason: reason, Message: message},
		},
	}
	must(e.t, admin.Create(ctx, rev, client.FieldOwner(syncv1.FieldManagerSource)))
	appObj := &syncv1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: app}}
	must(e.t, ssa.ApplyStatus(ctx, admin, appObj, syncv1.FieldManagerSource, map[string]any{"desiredRevision": name, "sourceCommit": commit}))
}

// TestRenderFailure_IsShownAndNothingIsApplied: a desired Revision that
// records a render failure makes the Application Failed and not Ready with
// the failure's reason, adds a Failed attempt to its history, and applies
// nothing, whether or not a Revision was deployed before.
func TestRenderFailure_IsShownAndNothingIsApplied(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name           string
		deployedBefore bool
		reason         string
	}{
		{"first commit fails to decrypt", false, syncv1.ReasonDecryptionFailed},
		{"a later commit fails to render", true, syncv1.ReasonRenderFailed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.startController(defaultOptions())
			e.createApplication("web", nil)
			var deployed string
			if tc.deployedBefore {
				deployed = e.publish("web", object(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web","namespace":"`+e.ns+`"},"data":{"v":"1"}}`))
				e.waitForPhase(deployed, syncv1.PhaseHealthy)
			}
			message := "commit cccccccccccc: apps/web/db.yaml: encrypted with SOPS, but spec.decryption is not set"
			e.publishRenderFailure("web", "web-f00dfeed00", tc.reason, message)

			var app *syncv1.Application
			eventually(t, "the Application to show the render failure", func() bool {
				app = e.application("web")
				ready := meta.FindStatusCondition(app.Status.Conditions, syncv1.ConditionReady)
				return app.Status.Phase == syncv1.PhaseFailed && ready != nil && ready.Status == metav1.ConditionFalse &&
					ready.Reason == tc.reason && strings.Contains(ready.Message, "web-f00dfeed00 failed to render") &&
					strings.Contains(ready.Message, "spec.decryption is not set")
			}, func() string { return fmt.Sprintf("%+v", app.Status) })
			if h := app.Status.History; len(h) == 0 || h[0].Revision != "web-f00dfeed00" || h[0].Result != syncv1.PhaseFailed || h[0].Reason != tc.reason {
				t.Fatalf("history %+v, want the failed render first with result Failed, reason %s", h, tc.reason)
			}
			if app.Status.DeployedRevision != deployed || app.Status.Sync != syncv1.SyncStateOutOfSync {
				t.Fatalf("deployed %q, sync %q; want %q still deployed and OutOfSync", app.Status.DeployedRevision, app.Status.Sync, deployed)
			}
			if h := app.Status.History[0]; h.SourceCommit != strings.Repeat("c", 40) {
				t.Fatalf("history entry commit %q, want the commit that failed to render", h.SourceCommit)
			}
			// The sync-controller records the Revision Failed, with the
			// reason, in one status write of its own.
			rev := &syncv1.Revision{}
			eventually(t, "the Revision recorded Failed", func() bool {
				must(t, admin.Get(t.Context(), types.NamespacedName{Namespace: e.ns, Name: "web-f00dfeed00"}, rev))
				return rev.Status.Phase == syncv1.PhaseFailed
			}, func() string { return fmt.Sprintf("%+v", rev.Status) })
			rendered := meta.FindStatusCondition(rev.Status.Conditions, syncv1.ConditionRendered)
			if rendered == nil || rendered.Status != metav1.ConditionFalse || rendered.Reason != tc.reason ||
				!strings.Contains(rendered.Message, "spec.decryption is not set") {
				t.Fatalf("Revision Rendered condition %+v, want False %s with the failure's message", rendered, tc.reason)
			}
			if rev.Status.Plan != nil || rev.Status.Attempt != 0 {
				t.Fatalf("the failed render was taken further: plan %+v, attempt %d", rev.Status.Plan, rev.Status.Attempt)
			}
			for _, m := range rev.ManagedFields {
				if m.Subresource == "status" && m.Manager != syncv1.FieldManagerSync {
					t.Fatalf("Revision status written by %s, want only %s", m.Manager, syncv1.FieldManagerSync)
				}
			}
			// Later passes find it recorded and write it no more.
			written := rev.ResourceVersion
			app = e.application("web")
			app.Spec.History.Limit = 5
			must(t, admin.Update(t.Context(), app))
			eventually(t, "a later pass recorded on the Application", func() bool {
				a := e.application("web")
				ready := meta.FindStatusCondition(a.Status.Conditions, syncv1.ConditionReady)
				return ready != nil && ready.ObservedGeneration == a.Generation
			}, nil)
			must(t, admin.Get(t.Context(), types.NamespacedName{Namespace: e.ns, Name: "web-f00dfeed00"}, rev))
			if rev.ResourceVersion != written {
				t.Fatalf("the Revision was written again (resourceVersion %s, then %s)", written, rev.ResourceVersion)
			}
		})
	}
}
