package diagnosis

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/yaml"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/controlplane"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/impersonate"
)

// The live tests share one control plane with kwok nodes whose Pods follow
// testdata/kwok-stages.yaml when labelled for a failing state. Each test
// works in its own namespace, as a service account there.
var (
	cp    *controlplane.ControlPlane
	admin client.Client
)

const liveTimeout = 3 * time.Minute

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	var err error
	cp, err = controlplane.Start(ctx, controlplane.Options{Full: true, Stages: []string{stagesFile()}, ControllerManagerFlags: controlplane.ParallelTestsControllerManagerFlags})
	if err == nil {
		admin, err = client.New(unthrottled(cp.Config), client.Options{Scheme: manager.Scheme()})
	}
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting control plane:", err)
		if cp != nil {
			_ = cp.Stop()
		}
		os.Exit(1)
	}
	code := m.Run()
	if err := cp.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping control plane:", err)
	}
	os.Exit(code)
}

// unthrottled lifts client-go's client-side rate limit: tests create
// hundreds of objects, and the API server is theirs alone.
func unthrottled(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = -1, 0
	return cfg
}

func stagesFile() string {
	wd, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	return wd + "/testdata/kwok-stages.yaml"
}

// account is the service account a test diagnoses as.
const account = "deployer"

// namespaceFor creates a namespace whose service account has rules there
// (the guide's reads when nil), and deletes it at the end.
func namespaceFor(t *testing.T, rules []rbacv1.PolicyRule) string {
	t.Helper()
	ctx := context.Background()
	nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "diag-"}}
	must(t, admin.Create(ctx, nsObj))
	t.Cleanup(func() { _ = admin.Delete(context.Background(), nsObj) })
	name := nsObj.Name
	if rules == nil {
		rules = guideRules()
	}
	must(t, admin.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: account}}))
	must(t, admin.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "diagnose"}, Rules: rules}))
	must(t, admin.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "diagnose"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "diagnose"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: name, Name: account}},
	}))
	return name
}

// grantVolumes lets the namespace's service account get PersistentVolumes:
// they are cluster-scoped, so only a ClusterRole can.
func grantVolumes(t *testing.T, namespace string) {
	t.Helper()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: namespace + "-volumes"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"persistentvolumes"}, Verbs: []string{"get"}},
	}}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: namespace + "-volumes"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: account}},
	}
	for _, obj := range []client.Object{role, binding} {
		must(t, admin.Create(t.Context(), obj))
		t.Cleanup(func() { _ = admin.Delete(context.Background(), obj) })
	}
}

// guideRules are the reads of the guide's "Diagnosis permissions", plus get
// on the managed kinds, which the account applies anyway.
func guideRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{"apps"}, Resources: []string{"replicasets"}, Verbs: []string{"list"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}},
		{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets", "serviceaccounts", "persistentvolumeclaims", "services"}, Verbs: []string{"get"}},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments", "statefulsets", "daemonsets"}, Verbs: []string{"get"}},
		{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"get"}},
		{APIGroups: []string{"autoscaling"}, Resources: []string{"horizontalpodautoscalers"}, Verbs: []string{"get"}},
		{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses"}, Verbs: []string{"get"}},
	}
}

// reader is a client acting as the namespace's service account, counting
// the requests it sends.
func reader(t *testing.T, namespace string, requests *atomic.Int64) client.Client {
	t.Helper()
	cfg := unthrottled(cp.Impersonate(impersonate.UserName(client.ObjectKey{Namespace: namespace, Name: account})))
	if requests != nil {
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
			return roundTripper(func(r *http.Request) (*http.Response, error) {
				requests.Add(1)
				return rt.RoundTrip(r)
			})
		})
	}
	c, err := client.New(cfg, client.Options{Scheme: manager.Scheme(), Mapper: mapper(t, cp.Config)})
	must(t, err)
	return c
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// mapper is built as admin, so that discovery is not among the requests a
// diagnosis is counted for.
func mapper(t *testing.T, cfg *rest.Config) meta.RESTMapper {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	must(t, err)
	m, err := apiutil.NewDynamicRESTMapper(cfg, hc)
	must(t, err)
	return m
}

// create creates objects from YAML as admin, in namespace, and returns the
// roots of an inventory holding them.
func create(t *testing.T, namespace, manifests string) *syncv1.Revision {
	t.Helper()
	rev := &syncv1.Revision{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "app-1"}}
	rev.Status.Inventory = &syncv1.Inventory{}
	for _, doc := range strings.Split(manifests, "\n---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		obj := &unstructured.Unstructured{}
		must(t, yaml.Unmarshal([]byte(doc), &obj.Object))
		obj.SetNamespace(namespace)
		must(t, admin.Create(t.Context(), obj))
		gvk := obj.GroupVersionKind()
		rev.Status.Inventory.Entries = append(rev.Status.Inventory.Entries,
			strings.Join([]string{namespace, obj.GetName(), gvk.Group, gvk.Kind, gvk.Version}, "_"))
		if stage := obj.GetAnnotations()["test.kuvryn.io/hook"]; stage != "" {
			if rev.Status.Hooks == nil {
				rev.Status.Hooks = &syncv1.HookList{}
			}
			rev.Status.Hooks.Items = append(rev.Status.Hooks.Items, syncv1.HookStatus{
				ObjectRef: syncv1.ObjectRef{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: namespace, Name: obj.GetName()},
				Stage:     stage, State: syncv1.HookFailed,
			})
		}
	}
	return rev
}

// waitForCauses diagnoses as the account until the causes match want (one
// list of link patterns per cause) and returns the last diagnosis.
func waitForCauses(t *testing.T, c client.Client, rev *syncv1.Revision, want [][]string) *syncv1.Diagnosis {
	t.Helper()
	deadline := time.Now().Add(liveTimeout)
	var d *syncv1.Diagnosis
	var err error
	for {
		d, err = Run(t.Context(), c, rev.Namespace, rev)
		if err == nil && matches(d, want) {
			return d
		}
		if time.Now().After(deadline) {
			out, _ := yaml.Marshal(d)
			t.Fatalf("diagnosis never matched (last error: %v):\n%s\nwant:\n%s", err, out, show(want))
		}
		time.Sleep(time.Second)
	}
}

func matches(d *syncv1.Diagnosis, want [][]string) bool {
	if d == nil {
		return len(want) == 0
	}
	if len(d.Causes) != len(want) {
		return false
	}
	for i, c := range d.Causes {
		lines := chain(c)
		if len(lines) != len(want[i]) {
			return false
		}
		for j, pattern := range want[i] {
			if !regexp.MustCompile("^" + pattern + "$").MatchString(lines[j]) {
				return false
			}
		}
	}
	return true
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}
