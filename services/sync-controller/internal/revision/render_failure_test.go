package revision

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/ssa"
)

// publishRenderFailure does what the source-controller does when a commit
// fails to render: a Revision without a desired state, phase Failed, with
// the reason in its Rendered condition, becomes the desired one.
func (e *testEnv) publishRenderFailure(app, name, reason, message string) {
	e.t.Helper()
	ctx := e.t.Context()
	rev := &syncv1.Revision{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name, Labels: map[string]string{syncv1.ApplicationLabel: app}},
		Spec:       syncv1.RevisionSpec{ApplicationName: app},
	}
	must(e.t, admin.Create(ctx, rev))
	must(e.t, ssa.ApplyStatus(ctx, admin, rev, syncv1.FieldManagerSource, map[string]any{
		"source":     map[string]any{"commit": strings.Repeat("c", 40)},
		"phase":      syncv1.PhaseFailed,
		"conditions": ssa.Conditions(nil, []string{syncv1.ConditionRendered}, ssa.Condition(syncv1.ConditionRendered, false, reason, message, 0)),
	}))
	appObj := &syncv1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: app}}
	must(e.t, ssa.ApplyStatus(ctx, admin, appObj, syncv1.FieldManagerSource, map[string]any{"desiredRevision": name}))
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
			rev := &syncv1.Revision{}
			must(t, admin.Get(t.Context(), types.NamespacedName{Namespace: e.ns, Name: "web-f00dfeed00"}, rev))
			if rev.Status.Phase != syncv1.PhaseFailed || rev.Status.Plan != nil || rev.Status.Attempt != 0 {
				t.Fatalf("the failed render was taken further: phase %s, plan %+v, attempt %d", rev.Status.Phase, rev.Status.Plan, rev.Status.Attempt)
			}
		})
	}
}
