package revision

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestDrift_RightToWatchIsAskedAgainEveryResync: a kind the controller may
// not list and watch is re-checked with a SelfSubjectAccessReview every
// --drift-resync-interval; once RBAC grants it, the controller watches it.
func TestDrift_RightToWatchIsAskedAgainEveryResync(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r, _ := e.startReconcilerAs(e.restrictedController(), driftOptions())
	e.createApplication("shop", nil)
	name := e.publish("shop", configMap(t, "settings"))
	e.waitForPhase(name, syncv1.PhaseHealthy)
	configMaps := schema.GroupKind{Kind: "ConfigMap"}
	watching := func() bool { return r.watches.Watched(configMaps) }
	if watching() {
		t.Fatal("the controller watches ConfigMaps, which it may not list and watch")
	}

	user := "kuvryn-sync-" + e.ns
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user + "-configmaps"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list", "watch"}},
	}}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	must(t, admin.Create(t.Context(), role))
	must(t, admin.Create(t.Context(), binding))
	t.Cleanup(func() {
		_ = admin.Delete(context.Background(), binding)
		_ = admin.Delete(context.Background(), role)
	})
	eventually(t, "the controller watching ConfigMaps after a resync re-checked its rights", watching, nil)
}
