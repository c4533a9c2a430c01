package revision

import (
	"encoding/base64"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/impersonate"
)

const apiToken = "s3cr3t-token-value"

const tokenSecret = `
apiVersion: v1
kind: Secret
metadata:
  name: api
stringData:
  token: ` + apiToken + `
`

// independentPlanner is a reconciler that shares nothing with the
// controller under test: its own clients, REST mapper and impersonation.
func independentPlanner(t *testing.T) *Reconciler {
	t.Helper()
	cfg := rest.CopyConfig(cp.Config)
	httpClient, err := rest.HTTPClientFor(cfg)
	must(t, err)
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	must(t, err)
	c, err := client.New(cfg, client.Options{Scheme: manager.Scheme(), Mapper: mapper})
	must(t, err)
	return &Reconciler{
		Client:    c,
		APIReader: c,
		Mapper:    mapper,
		Clients:   impersonate.NewClients(cfg, manager.Scheme(), mapper),
	}
}

func TestPlan_DigestIsTheSameFromTwoIndependentPlanners(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	// A live ConfigMap the plan updates, so live state enters the digest.
	must(t, admin.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "settings"},
		Data:       map[string]string{"mode": "fast"},
	}))
	e.startController(defaultOptions())
	e.createApplication("shop", func(app *syncv1.Application) { app.Spec.Sync.Automatic = false })
	settings := object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: fast\n  extra: \"1\"\n")
	name := e.publish("shop", settings, object(t, tokenSecret), object(t, webDeployment), object(t, migrateJob))

	rev := e.waitForPhase(name, syncv1.PhaseAwaitingApproval)
	got := rev.Status.Plan
	if got == nil || !strings.HasPrefix(got.Digest, "sha256:") {
		t.Fatalf("plan = %+v, want a digest", got)
	}
	wantSummary := syncv1.PlanSummary{Create: 3, Update: 1}
	if got.Summary != wantSummary {
		t.Errorf("plan summary = %+v, want %+v", got.Summary, wantSummary)
	}

	other := independentPlanner(t)
	ro := newRollout(e.application("shop"))
	ro.setRevision(e.revision(name))
	if s, err := other.resolveServiceAccount(ctx, ro); err != nil || !s.next {
		t.Fatalf("resolving the service account: %v", err)
	}
	again, err := other.computePlan(ctx, ro)
	must(t, err)
	if again.Digest != got.Digest {
		t.Errorf("independent planner digest = %s, controller's = %s", again.Digest, got.Digest)
	}
	again.PlannedAt = got.PlannedAt
	if !reflect.DeepEqual(&again, got) {
		t.Errorf("independent planner plan differs:\n%+v\nwant\n%+v", again, *got)
	}

	// The Secret's value appears in no diff, neither plain nor base64.
	for _, entry := range got.Entries {
		if strings.Contains(entry.Diff, apiToken) || strings.Contains(entry.Diff, base64.StdEncoding.EncodeToString([]byte(apiToken))) {
			t.Errorf("plan entry %s/%s shows the Secret value:\n%s", entry.Kind, entry.Name, entry.Diff)
		}
	}
}

func TestPlan_ManualApplicationWaitsForApprovalAndAppliesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startController(defaultOptions())
	e.createApplication("shop", func(app *syncv1.Application) { app.Spec.Sync.Automatic = false })
	name := e.publish("shop", configMap(t, "settings"), object(t, migrateJob))

	rev := e.waitForPhase(name, syncv1.PhaseAwaitingApproval)
	if c := condition(rev.Status.Conditions, syncv1.ConditionAwaitingApproval); c.Status != "True" ||
		c.Reason != syncv1.ReasonAwaitingApproval || !contains(c.Message, rev.Status.Plan.Digest) {
		t.Errorf("AwaitingApproval = %+v, want True naming the plan digest", c)
	}
	eventually(t, "one AwaitingApproval Event", func() bool {
		return len(e.events("shop", syncv1.ReasonAwaitingApproval)) == 1
	}, nil)
	app := e.application("shop")
	if app.Status.Phase != syncv1.PhaseAwaitingApproval || app.Status.Sync != syncv1.SyncStateOutOfSync {
		t.Errorf("Application phase %q sync %q, want AwaitingApproval and OutOfSync", app.Status.Phase, app.Status.Sync)
	}
	if c := condition(app.Status.Conditions, syncv1.ConditionAwaitingApproval); c.Status != "True" {
		t.Errorf("Application AwaitingApproval = %+v, want True", c)
	}
	if e.get("v1", "ConfigMap", "settings") != nil || e.get("batch/v1", "Job", "migrate") != nil {
		t.Error("objects of a Revision awaiting approval were applied")
	}
	if len(app.Status.History) != 0 {
		t.Errorf("history = %+v, want no attempt", app.Status.History)
	}
}
