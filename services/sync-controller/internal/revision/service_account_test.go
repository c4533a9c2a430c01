package revision

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/planner"
)

func TestServiceAccount_MissingOneIsRefusedWithACondition(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startController(defaultOptions())
	e.createApplication("shop", func(app *syncv1.Application) { app.Spec.ServiceAccountName = "" })
	name := e.publish("shop", configMap(t, "settings"))

	eventually(t, "Application Ready False with reason ServiceAccountMissing", func() bool {
		c := condition(e.application("shop").Status.Conditions, syncv1.ConditionReady)
		return c.Status == "False" && c.Reason == syncv1.ReasonServiceAccountMissed &&
			contains(c.Message, "spec.serviceAccountName", "--default-service-account")
	}, func() string { return describeRevision(e.revision(name)) })
	if c := condition(e.revision(name).Status.Conditions, syncv1.ConditionPlanned); c.Reason != syncv1.ReasonServiceAccountMissed {
		t.Errorf("Revision Planned = %+v, want reason ServiceAccountMissing", c)
	}
	if e.get("v1", "ConfigMap", "settings") != nil {
		t.Error("an Application without a service account was applied")
	}
}

func TestServiceAccount_DefaultOneActsForApplicationsWithoutOne(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o := defaultOptions()
	o.DefaultServiceAccount = serviceAccount
	e.startController(o)
	e.createApplication("shop", func(app *syncv1.Application) { app.Spec.ServiceAccountName = "" })
	e.waitForPhase(e.publish("shop", configMap(t, "settings")), syncv1.PhaseHealthy)
	obj := e.get("v1", "ConfigMap", "settings")
	if obj == nil || !planner.ManagedBySync(obj) {
		t.Fatalf("ConfigMap settings = %v, want it applied by kuvryn-sync", obj)
	}
}

func TestServiceAccount_ApplyIsLimitedToTheAccountsPermissions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startController(defaultOptions())
	e.createApplication("shop", nil)
	// The admin role of a namespace does not reach cluster-scoped objects.
	ns := object(t, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: escape-"+e.ns+"\n")
	name := e.publish("shop", ns)

	rev := e.waitForPhase(name, syncv1.PhaseFailed)
	if c := condition(rev.Status.Conditions, syncv1.ConditionPlanned); c.Reason != syncv1.ReasonPlanFailed ||
		!contains(c.Message, "system:serviceaccount:"+e.ns+":"+serviceAccount, "forbidden") {
		t.Errorf("Planned = %+v, want PlanFailed naming the service account and forbidden", c)
	}
}

// TestServiceAccount_DestinationWithoutRightsNamesTheField: the service
// account acts from the Application's namespace, so a destination namespace
// where it has no RoleBinding is refused, and the refusal says which field
// sent it there.
func TestServiceAccount_DestinationWithoutRightsNamesTheField(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startController(defaultOptions())
	dest := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "elsewhere-"}}
	must(t, admin.Create(t.Context(), dest))
	t.Cleanup(func() { _ = admin.Delete(context.Background(), dest) })
	e.createApplication("shop", func(app *syncv1.Application) { app.Spec.Destination.Namespace = dest.Name })
	name := e.publish("shop", configMap(t, "settings"))

	rev := e.waitForPhase(name, syncv1.PhaseFailed)
	if c := condition(rev.Status.Conditions, syncv1.ConditionPlanned); c.Reason != syncv1.ReasonPlanFailed ||
		!contains(c.Message, "ConfigMap "+dest.Name+"/settings", "forbidden", "spec.destination.namespace is "+dest.Name) {
		t.Errorf("Planned = %+v, want PlanFailed naming the object, the refusal and spec.destination.namespace", c)
	}
}
