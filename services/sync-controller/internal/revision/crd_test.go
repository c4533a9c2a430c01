package revision

import (
	"context"
	"fmt"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// bindClusterAdmin lets the test's service account manage cluster-scoped objects.
func (e *testEnv) bindClusterAdmin() {
	e.t.Helper()
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "deployer-" + e.ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: e.ns, Name: serviceAccount}},
	}
	must(e.t, admin.Create(e.t.Context(), binding))
	e.t.Cleanup(func() { _ = admin.Delete(context.Background(), binding) })
}

// customResourceDefinition is a namespaced kind of group, served at v1,
// taking any fields; subresources is the YAML flow map of its subresources,
// if any.
func customResourceDefinition(t *testing.T, group, kind, subresources string) *unstructured.Unstructured {
	singular := strings.ToLower(kind)
	if subresources != "" {
		subresources = "\n    subresources: " + subresources
	}
	return object(t, fmt.Sprintf(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %[2]ss.%[1]s
spec:
  group: %[1]s
  scope: Namespaced
  names: {plural: %[2]ss, singular: %[2]s, kind: %[3]s, listKind: %[3]sList}
  versions:
  - name: v1
    served: true
    storage: true%[4]s
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`, group, singular, kind, subresources))
}

func TestRollout_CustomResourceAppliesWithItsDefinitionAndNamespace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.bindClusterAdmin()
	e.startController(defaultOptions())
	e.createApplication("platform", nil)

	group := e.ns + ".test.kuvryn.io"
	target := "target-" + e.ns
	crd := customResourceDefinition(t, group, "Widget", "")
	ns := object(t, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+target+"\n")
	widget := object(t, fmt.Sprintf("apiVersion: %s/v1\nkind: Widget\nmetadata:\n  name: gear\n  namespace: %s\nspec:\n  size: 3\n", group, target))
	defaultNamespaced := object(t, fmt.Sprintf("apiVersion: %s/v1\nkind: Widget\nmetadata:\n  name: cog\n", group))
	name := e.publish("platform", crd, ns, widget, defaultNamespaced)
	t.Cleanup(func() {
		_ = admin.Delete(context.Background(), ns)
		_ = admin.Delete(context.Background(), crd)
	})

	rev := e.waitForPhase(name, syncv1.PhaseHealthy)
	if rev.Status.Plan == nil || rev.Status.Plan.Summary.Create != 4 {
		t.Errorf("plan = %+v, want 4 creates planned before the kind and namespace exist", rev.Status.Plan)
	}
	for _, entry := range rev.Status.Plan.Entries {
		if entry.Kind == "Widget" && entry.Name == "cog" && entry.Namespace != e.ns {
			t.Errorf("Widget cog planned in namespace %q, want the destination %q", entry.Namespace, e.ns)
		}
	}
	if e.get(group+"/v1", "Widget", "cog") == nil {
		t.Errorf("Widget cog not applied in the Application's namespace")
	}
}
