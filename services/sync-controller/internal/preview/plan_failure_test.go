package preview

import (
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestPreview_AFailingPlanIsTheResultWithItsDiagnosis: a preview whose plan
// is refused (the service account may not read a Deployment it changes),
// invalid (a field of the wrong type), in conflict with another field
// manager, without a service account or an Application to plan as, or
// whose commit failed to render ends Failed, its Planned condition False
// with the reason from the one list and a message naming the object and
// the problem, and a diagnosis of the failure naming the object it is
// about, if any; nothing is applied.
func TestPreview_AFailingPlanIsTheResultWithItsDiagnosis(t *testing.T) {
	t.Parallel()
	const good = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: good}\ndata: {mode: fine}\n"
	tests := []struct {
		name string
		// prepare sets the namespace up and returns the preview Revision.
		prepare func(e *env) string
		reason  string
		message []string
		// object is "Kind/name" of the diagnosis' cause; empty for none.
		object string
	}{
		{
			name: "the service account may not read a Deployment",
			prepare: func(e *env) string {
				e.serviceAccount("reader", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets"}, Verbs: []string{"*"}})
				e.application("web", "reader")
				return e.preview("web", nil, object(e.t, good), object(e.t, dbSecret), object(e.t, deployment("nginx:2.0")))
			},
			reason:  syncv1.ReasonPlanFailed,
			message: []string{"read Deployment", "web", "forbidden", "system:serviceaccount:", ":reader", "cannot get resource \"deployments\""},
			object:  "Deployment/web",
		},
		{
			name: "a field of the wrong type",
			prepare: func(e *env) string {
				e.application("web", "deployer")
				bad := object(e.t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad}\ndata:\n  size: {large: true}\n")
				return e.preview("web", nil, object(e.t, good), bad)
			},
			reason:  syncv1.ReasonValidationFailure,
			message: []string{"ConfigMap", "bad", ".data.size"},
			object:  "ConfigMap/bad",
		},
		{
			name: "a field another field manager owns",
			prepare: func(e *env) string {
				e.application("web", "deployer")
				settings := object(e.t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: fast}\n")
				settings.SetNamespace(e.ns)
				must(e.t, admin.Apply(e.t.Context(), client.ApplyConfigurationFromUnstructured(settings), client.FieldOwner("other-operator")))
				changed := object(e.t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: slow}\n")
				return e.preview("web", nil, object(e.t, good), changed)
			},
			reason:  syncv1.ReasonApplyConflict,
			message: []string{"ConfigMap", "settings", `field manager "other-operator" owns .data.mode`},
			object:  "ConfigMap/settings",
		},
		{
			name: "the service account does not exist",
			prepare: func(e *env) string {
				e.application("web", "ghost")
				return e.preview("web", nil, object(e.t, good))
			},
			reason:  syncv1.ReasonServiceAccountMissed,
			message: []string{"ServiceAccount", "/ghost", "not found"},
		},
		{
			name: "no Application, and the preview declares none",
			prepare: func(e *env) string {
				return e.preview("web", nil, object(e.t, good))
			},
			reason:  syncv1.ReasonPlanFailed,
			message: []string{"Application", "/web not found", "spec.preview.newApplication is not set"},
		},
		{
			name: "the commit failed to render",
			prepare: func(e *env) string {
				e.application("web", "deployer")
				return e.previewRenderFailure("web", syncv1.ReasonRenderFailed, "apps/web/kustomization.yaml: accumulating resources: missing.yaml not found")
			},
			reason:  syncv1.ReasonRenderFailed,
			message: []string{"failed to render", "missing.yaml not found"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			rev := e.waitForResult(tt.prepare(e))

			c := meta.FindStatusCondition(rev.Status.Conditions, syncv1.ConditionPlanned)
			if rev.Status.Phase != syncv1.PhaseFailed || c.Status != "False" || c.Reason != tt.reason || rev.Status.Plan != nil {
				t.Fatalf("phase %s, Planned %+v, plan %+v; want Failed, False, %s, no plan", rev.Status.Phase, c, rev.Status.Plan, tt.reason)
			}
			for _, part := range tt.message {
				if !strings.Contains(c.Message, part) {
					t.Errorf("Planned message %q does not name %q", c.Message, part)
				}
			}
			d := rev.Status.Diagnosis
			if d == nil || !strings.HasPrefix(d.Summary, tt.reason+": ") || !strings.Contains(d.Summary, tt.message[0]) {
				t.Fatalf("diagnosis %+v, want a summary giving %s and the failure", d, tt.reason)
			}
			var object string
			if len(d.Causes) > 0 {
				l := d.Causes[0].Chain[0]
				object = l.Kind + "/" + l.Name
				if l.Namespace != e.ns || l.Message != c.Message {
					t.Errorf("diagnosis cause %+v, want it in namespace %s with the failure's message", l, e.ns)
				}
			}
			if len(d.Causes) > 1 || object != tt.object {
				t.Errorf("diagnosis causes %+v, want one naming %q", d.Causes, tt.object)
			}
			if e.live("v1", "ConfigMap", "good") != nil {
				t.Error("an object of a preview was applied")
			}
		})
	}
}
