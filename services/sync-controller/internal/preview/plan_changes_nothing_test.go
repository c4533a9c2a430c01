package preview

import (
	"encoding/base64"
	"fmt"
	"reflect"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/hook"
)

func deployment(image string) string {
	return `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "` + image + `"}]
`
}

// password is the value of the Secret a preview adds; no plan may show it.
const password = "preview-hunter2-value"

const (
	legacyConfigMap = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: legacy}\ndata: {mode: old}\n"
	dbSecret        = "apiVersion: v1\nkind: Secret\nmetadata: {name: db}\nstringData: {password: " + password + "}\n"
	migrateHook     = `
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations: {sync.kuvryn.io/hook: pre-sync}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: "migrate:2"}]
`
)

// TestPreview_PlansTheChangeAndChangesNothingInTheCluster: a preview that
// changes a Deployment's image (scaled by hand since it was deployed), adds
// a Secret and a pre-sync hook and drops a ConfigMap is planned as an update, two creates (the hook's marked as
// such) and the delete a prune would make, with the Secret's value in no
// diff; nothing in the cluster is written: the Deployment and the
// ConfigMap keep their resourceVersion and managed fields, neither the
// Secret nor the hook's Job exists, and the Application's status and
// history stay as they were. An Application that exists only in the
// preview is planned as the service account the preview declares: all
// creates, nothing to delete.
func TestPreview_PlansTheChangeAndChangesNothingInTheCluster(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		existing bool
		want     map[string]syncv1.PlanAction
		summary  syncv1.PlanSummary
	}{
		{
			name: "existing Application", existing: true,
			want: map[string]syncv1.PlanAction{
				"Deployment/web": syncv1.ActionUpdate, "Secret/db": syncv1.ActionCreate,
				"Job/migrate": syncv1.ActionCreate, "ConfigMap/legacy": syncv1.ActionDelete,
			},
			summary: syncv1.PlanSummary{Create: 2, Update: 1, Delete: 1},
		},
		{
			name: "Application new in the preview",
			want: map[string]syncv1.PlanAction{
				"Deployment/web": syncv1.ActionCreate, "Secret/db": syncv1.ActionCreate, "Job/migrate": syncv1.ActionCreate,
			},
			summary: syncv1.PlanSummary{Create: 3},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			var newApp *syncv1.PreviewApplication
			var app *syncv1.Application
			if tt.existing {
				app = e.application("web", "deployer")
				// Automatic, and scaled by hand: its rollout would take the
				// field back before its dry-run; its preview must not.
				app.Spec.Sync.Automatic = true
				must(t, admin.Update(t.Context(), app))
				e.deploy("web", object(t, deployment("nginx:1.0")), object(t, legacyConfigMap))
				scaled := object(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"`+e.ns+`"}}`)
				must(t, admin.Patch(t.Context(), scaled, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":3}}`)), client.FieldOwner("kubectl-scale")))
				app = e.get(app).(*syncv1.Application)
			} else {
				newApp = &syncv1.PreviewApplication{ServiceAccountName: "deployer"}
			}
			liveBefore := e.snapshot()

			name := e.preview("web", newApp, object(t, deployment("nginx:2.0")), object(t, dbSecret), object(t, migrateHook))
			rev := e.waitForResult(name)

			c := meta.FindStatusCondition(rev.Status.Conditions, syncv1.ConditionPlanned)
			if rev.Status.Phase != syncv1.PhasePlanned || c.Status != "True" || c.Reason != syncv1.ReasonSucceeded || rev.Status.Plan == nil ||
				!strings.Contains(c.Message, rev.Status.Plan.Digest) {
				t.Fatalf("phase %s, Planned %+v, plan %+v; want Planned, True, Succeeded, naming the plan's digest", rev.Status.Phase, c, rev.Status.Plan)
			}
			p := rev.Status.Plan
			if !strings.HasPrefix(p.Digest, "sha256:") || p.Summary != tt.summary {
				t.Errorf("plan digest %q, summary %+v; want a sha256 digest and %+v", p.Digest, p.Summary, tt.summary)
			}
			got := map[string]syncv1.PlanAction{}
			for _, entry := range p.Entries {
				got[entry.Kind+"/"+entry.Name] = entry.Action
				if strings.Contains(entry.Diff, password) || strings.Contains(entry.Diff, base64.StdEncoding.EncodeToString([]byte(password))) {
					t.Errorf("plan entry %s/%s shows the Secret's value:\n%s", entry.Kind, entry.Name, entry.Diff)
				}
				switch entry.Kind + "/" + entry.Name {
				case "Job/migrate":
					if entry.Hook != string(hook.PreSync) {
						t.Errorf("the hook's entry has hook %q, want %q", entry.Hook, hook.PreSync)
					}
				case "Deployment/web":
					if tt.existing && !strings.Contains(entry.Diff, "nginx:2.0") || tt.existing && !strings.Contains(entry.Diff, "replicas") {
						t.Errorf("the Deployment's diff does not show the new image and the replicas taken back:\n%s", entry.Diff)
					}
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("plan actions %v, want %v", got, tt.want)
			}
			if rev.Status.Diagnosis != nil || rev.Status.Attempt != 0 || rev.Status.Inventory != nil || rev.Status.Hooks != nil {
				t.Errorf("a planned preview Revision records more than its plan: %+v", rev.Status)
			}

			if after := e.snapshot(); !reflect.DeepEqual(after, liveBefore) {
				t.Errorf("the cluster changed while the preview was planned:\nbefore %v\nafter  %v", liveBefore, after)
			}
			if app != nil {
				if now := e.get(app).(*syncv1.Application); now.ResourceVersion != app.ResourceVersion || len(now.Status.History) != 0 {
					t.Errorf("the Application changed (resourceVersion %s -> %s, history %+v); a preview never writes it",
						app.ResourceVersion, now.ResourceVersion, now.Status.History)
				}
			}
		})
	}
}

// snapshot is what the preview must not change: for each object it could
// touch, its resourceVersion and managed fields, or "absent".
func (e *env) snapshot() map[string]string {
	e.t.Helper()
	out := map[string]string{}
	for _, o := range []struct{ apiVersion, kind, name string }{
		{"apps/v1", "Deployment", "web"}, {"v1", "ConfigMap", "legacy"}, {"v1", "Secret", "db"}, {"batch/v1", "Job", "migrate"},
	} {
		live := e.live(o.apiVersion, o.kind, o.name)
		if live == nil {
			out[o.kind] = "absent"
			continue
		}
		out[o.kind] = fmt.Sprintf("%s %v", live.GetResourceVersion(), live.GetManagedFields())
	}
	jobs := &batchv1.JobList{}
	must(e.t, admin.List(e.t.Context(), jobs, client.InNamespace(e.ns)))
	out["Jobs"] = fmt.Sprint(len(jobs.Items))
	return out
}

// get reads obj again as stored.
func (e *env) get(obj client.Object) client.Object {
	e.t.Helper()
	fresh := obj.DeepCopyObject().(client.Object)
	must(e.t, admin.Get(e.t.Context(), client.ObjectKeyFromObject(obj), fresh))
	return fresh
}
