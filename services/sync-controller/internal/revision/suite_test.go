package revision

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/desiredstate"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/pkg/ssa"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/controlplane"
)

// The suite runs one real control plane (etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler and kwok nodes) for the package.
// Each test works in its own namespace with its own manager, whose cache
// sees only that namespace, so that a test can stop its controller and
// start another one without disturbing the others.
var (
	cp    *controlplane.ControlPlane
	admin client.WithWatch
)

// timeout bounds every wait; the machine is slow and shared, so it is generous.
const timeout = 3 * time.Minute

// serviceAccount is the account every test Application applies as.
const serviceAccount = "deployer"

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Verbose() {
		ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.WriteTo(os.Stderr)))
	} else {
		ctrl.SetLogger(logr.Discard())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	var err error
	cp, err = controlplane.Start(ctx, controlplane.Options{Full: true})
	if err == nil {
		admin, err = client.NewWithWatch(cp.Config, client.Options{Scheme: manager.Scheme()})
	}
	if err == nil {
		err = waitForAdminRole(ctx)
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

// waitForAdminRole waits for the API server's bootstrap policy to create
// the admin ClusterRole and for kube-controller-manager to aggregate rules
// into it.
func waitForAdminRole(ctx context.Context) error {
	for {
		role := &rbacv1.ClusterRole{}
		err := admin.Get(ctx, types.NamespacedName{Name: "admin"}, role)
		if err == nil && len(role.Rules) > 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("ClusterRole admin not ready: %w (last error: %v)", ctx.Err(), err)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// testEnv is one test's namespace, service account and controller.
type testEnv struct {
	t  *testing.T
	ns string
}

// newEnv creates a namespace with a service account bound to the admin
// ClusterRole there.
func newEnv(t *testing.T) *testEnv {
	t.Helper()
	return &testEnv{t: t, ns: applierNamespace(t, admin, "sync-")}
}

// applierNamespace creates, with c, a namespace named from prefix whose
// service account may apply anything in it, and deletes it at the end.
func applierNamespace(tb testing.TB, c client.Client, prefix string) string {
	tb.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix}}
	must(tb, c.Create(ctx, ns))
	tb.Cleanup(func() { _ = c.Delete(context.Background(), ns) })
	must(tb, c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: serviceAccount}}))
	must(tb, c.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: serviceAccount + "-admin"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns.Name, Name: serviceAccount}},
	}))
	return ns.Name
}

// defaultOptions are the manager's defaults, with drift checks off unless a
// test turns them on.
func defaultOptions() Options {
	return Options{MaxConcurrentReconciles: 2}
}

// startController starts a manager running the reconciler over the test's
// namespace. The returned function stops it and waits until it has stopped;
// it also runs at the end of the test.
func (e *testEnv) startController(o Options) (stop func()) {
	e.t.Helper()
	return e.startControllerAs(cp.Config, o)
}

// startControllerAs starts the controller authenticating with cfg.
func (e *testEnv) startControllerAs(cfg *rest.Config, o Options) (stop func()) {
	e.t.Helper()
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 manager.Scheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{e.ns: {}}},
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	must(e.t, err)
	ctx, cancel := context.WithCancel(context.Background())
	must(e.t, New(mgr, o).SetupWithManager(ctx, mgr))
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
				e.t.Errorf("manager stopped with: %v", err)
			}
		})
	}
	e.t.Cleanup(stop)
	return stop
}

// createApplication creates an automatic Application applying as the
// test's service account; mutate may change it first.
func (e *testEnv) createApplication(name string, mutate func(*syncv1.Application)) *syncv1.Application {
	e.t.Helper()
	app := &syncv1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Spec: syncv1.ApplicationSpec{
			Source:             syncv1.ApplicationSource{RepositoryRef: syncv1.LocalObjectReference{Name: "repo"}},
			ServiceAccountName: serviceAccount,
			Sync:               syncv1.SyncPolicy{Automatic: true},
		},
	}
	if mutate != nil {
		mutate(app)
	}
	must(e.t, admin.Create(e.t.Context(), app))
	return app
}

// publish does what the source-controller does for a new render: it stores
// objs in a desired-state Secret owned by a new Revision and records the
// Revision as the Application's desired one, as field manager kuvryn-source.
func (e *testEnv) publish(app string, objs ...*unstructured.Unstructured) string {
	e.t.Helper()
	ctx := e.t.Context()
	data, digest, err := desiredstate.Encode(objs)
	must(e.t, err)
	name := desiredstate.RevisionName(app, digest)
	rev := &syncv1.Revision{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name, Labels: map[string]string{syncv1.ApplicationLabel: app}},
		Spec: syncv1.RevisionSpec{
			ApplicationName: app,
			DesiredState:    syncv1.DesiredStateRef{SecretName: name, Digest: digest, Objects: int32(len(objs))},
		},
	}
	if err := admin.Create(ctx, rev); err != nil && !apierrors.IsAlreadyExists(err) {
		e.t.Fatal(err)
	}
	must(e.t, admin.Get(ctx, client.ObjectKeyFromObject(rev), rev))
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: e.ns, Name: name, Labels: map[string]string{syncv1.ApplicationLabel: app},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: syncv1.GroupVersion.String(), Kind: "Revision", Name: rev.Name, UID: rev.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Type: syncv1.DesiredStateSecretType,
		Data: map[string][]byte{desiredstate.DataKey: data},
	}
	if err := admin.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
		e.t.Fatal(err)
	}
	appObj := &syncv1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: app}}
	must(e.t, ssa.ApplyStatus(ctx, admin, appObj, syncv1.FieldManagerSource, map[string]any{"desiredRevision": name}))
	return name
}

func (e *testEnv) application(name string) *syncv1.Application {
	e.t.Helper()
	app := &syncv1.Application{}
	must(e.t, admin.Get(e.t.Context(), types.NamespacedName{Namespace: e.ns, Name: name}, app))
	return app
}

func (e *testEnv) revision(name string) *syncv1.Revision {
	e.t.Helper()
	rev := &syncv1.Revision{}
	must(e.t, admin.Get(e.t.Context(), types.NamespacedName{Namespace: e.ns, Name: name}, rev))
	return rev
}

// waitForRevision polls the Revision until cond holds and returns it. The
// controller records the Revision's status before its Application's, so when
// the Revision is the one being worked on it also waits for the Application to show
// the same phase; a test may then read either.
func (e *testEnv) waitForRevision(name, what string, cond func(*syncv1.Revision) bool) *syncv1.Revision {
	e.t.Helper()
	var rev *syncv1.Revision
	eventually(e.t, what, func() bool {
		rev = &syncv1.Revision{}
		if err := admin.Get(e.t.Context(), types.NamespacedName{Namespace: e.ns, Name: name}, rev); err != nil {
			return false
		}
		if !cond(rev) {
			return false
		}
		app := &syncv1.Application{}
		if err := admin.Get(e.t.Context(), types.NamespacedName{Namespace: e.ns, Name: rev.Spec.ApplicationName}, app); err != nil {
			return false
		}
		working := app.Status.DesiredRevision == name && app.Status.HeldRevision != name
		return !working || app.Status.Phase == rev.Status.Phase
	}, func() string { return describeRevision(rev) })
	return rev
}

// waitForPhase waits for the Revision to reach phase and returns it.
func (e *testEnv) waitForPhase(name string, phase syncv1.RevisionPhase) *syncv1.Revision {
	e.t.Helper()
	return e.waitForRevision(name, fmt.Sprintf("Revision %s in phase %s", name, phase),
		func(rev *syncv1.Revision) bool { return rev.Status.Phase == phase })
}

func describeRevision(rev *syncv1.Revision) string {
	if rev == nil {
		return "no Revision read"
	}
	out, _ := yaml.Marshal(rev.Status)
	return "Revision status:\n" + string(out)
}

// get reads an object as admin; nil when it does not exist.
func (e *testEnv) get(apiVersion, kind, name string) *unstructured.Unstructured {
	e.t.Helper()
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion(apiVersion)
	obj.SetKind(kind)
	err := admin.Get(e.t.Context(), types.NamespacedName{Namespace: e.ns, Name: name}, obj)
	if apierrors.IsNotFound(err) {
		return nil
	}
	must(e.t, err)
	return obj
}

// events lists the Events about the Application with reason.
func (e *testEnv) events(app, reason string) []eventsv1.Event {
	e.t.Helper()
	var list eventsv1.EventList
	must(e.t, admin.List(e.t.Context(), &list, client.InNamespace(e.ns)))
	var found []eventsv1.Event
	for _, ev := range list.Items {
		if ev.Regarding.Kind == "Application" && ev.Regarding.Name == app && ev.Reason == reason {
			found = append(found, ev)
		}
	}
	sort.Slice(found, func(i, j int) bool { return found[i].CreationTimestamp.Before(&found[j].CreationTimestamp) })
	return found
}

// occurrences counts how often an Event happened, series included.
func occurrences(events []eventsv1.Event) int {
	n := 0
	for _, ev := range events {
		if ev.Series != nil {
			n += int(ev.Series.Count)
		} else {
			n++
		}
	}
	return n
}

// object parses one YAML manifest.
func object(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	must(t, yaml.Unmarshal([]byte(manifest), &obj.Object))
	return obj
}

func condition(conds []metav1.Condition, typ string) metav1.Condition {
	if c := meta.FindStatusCondition(conds, typ); c != nil {
		return *c
	}
	return metav1.Condition{Type: typ, Status: "absent"}
}

func hookState(rev *syncv1.Revision, name string) syncv1.HookStatus {
	if rev.Status.Hooks != nil {
		for _, h := range rev.Status.Hooks.Items {
			if h.Name == name {
				return h
			}
		}
	}
	return syncv1.HookStatus{}
}

// resourceVersion is an object's resourceVersion as a number. etcd's
// revisions order every write in the cluster, so they order the rollout's
// steps even within one second.
func resourceVersion(t *testing.T, obj client.Object) uint64 {
	t.Helper()
	rv, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	must(t, err)
	return rv
}

func eventually(t *testing.T, what string, cond func() bool, explain func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			msg := ""
			if explain != nil {
				msg = "\n" + explain()
			}
			t.Fatalf("timed out after %s waiting for %s%s", timeout, what, msg)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

func contains(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// gatedDeployment is a Deployment whose Pods schedule only once openGate
// labels the nodes, so a test holds a wave in progress for as long as it needs.
func (e *testEnv) gatedDeployment(name string) *unstructured.Unstructured {
	e.t.Helper()
	obj := object(e.t, fmt.Sprintf(`
apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
spec:
  replicas: 1
  selector:
    matchLabels: {app: %[1]s}
  template:
    metadata:
      labels: {app: %[1]s}
    spec:
      nodeSelector:
        %[2]s: open
      containers:
      - name: %[1]s
        image: %[1]s:1
`, name, e.gateLabel()))
	return obj
}

func (e *testEnv) gateLabel() string {
	return "gate.test.kuvryn.io/" + e.ns
}

// openGate labels every node so gated Pods schedule. It first waits for
// the scheduler to have given up on every gated Pod, so the label change is
// what brings them back, not a scheduling attempt it raced with.
func (e *testEnv) openGate() {
	e.t.Helper()
	eventually(e.t, "gated Pods reported Unschedulable", func() bool {
		var pods corev1.PodList
		must(e.t, admin.List(e.t.Context(), &pods, client.InNamespace(e.ns)))
		gated := 0
		for _, pod := range pods.Items {
			if _, ok := pod.Spec.NodeSelector[e.gateLabel()]; !ok {
				continue
			}
			gated++
			unschedulable := false
			for _, c := range pod.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
					unschedulable = true
				}
			}
			if !unschedulable {
				return false
			}
		}
		return gated > 0
	}, nil)
	var nodes corev1.NodeList
	must(e.t, admin.List(e.t.Context(), &nodes))
	for i := range nodes.Items {
		node := &nodes.Items[i]
		patch := client.MergeFrom(node.DeepCopy())
		if node.Labels == nil {
			node.Labels = map[string]string{}
		}
		node.Labels[e.gateLabel()] = "open"
		must(e.t, admin.Patch(e.t.Context(), node, patch))
		e.t.Cleanup(func() {
			n := &corev1.Node{}
			if err := admin.Get(context.Background(), client.ObjectKeyFromObject(node), n); err != nil {
				return
			}
			p := client.MergeFrom(n.DeepCopy())
			delete(n.Labels, e.gateLabel())
			_ = admin.Patch(context.Background(), n, p)
		})
	}
}

func unstructuredSet(obj *unstructured.Unstructured, value string, fields ...string) error {
	return unstructured.SetNestedField(obj.Object, value, fields...)
}

// controllerRules are the least a sync-controller needs, without list and
// watch on any kind it applies: drift of those is found by the resync.
var controllerRules = []rbacv1.PolicyRule{
	{APIGroups: []string{syncv1.GroupVersion.Group}, Resources: []string{"applications", "revisions"}, Verbs: []string{"get", "list", "watch", "delete"}},
	{APIGroups: []string{syncv1.GroupVersion.Group}, Resources: []string{"applications/status", "revisions/status"}, Verbs: []string{"get", "patch", "update"}},
	{APIGroups: []string{""}, Resources: []string{"secrets", "serviceaccounts"}, Verbs: []string{"get"}},
	{APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, Verbs: []string{"impersonate"}},
	{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch", "update"}},
}

// restrictedController returns a config for a controller identity bound
// only to controllerRules.
func (e *testEnv) restrictedController() *rest.Config {
	e.t.Helper()
	ctx := e.t.Context()
	user := "kuvryn-sync-" + e.ns
	cfg, err := cp.AddUser(user)
	must(e.t, err)
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: controllerRules}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	must(e.t, admin.Create(ctx, role))
	must(e.t, admin.Create(ctx, binding))
	e.t.Cleanup(func() {
		_ = admin.Delete(context.Background(), binding)
		_ = admin.Delete(context.Background(), role)
	})
	return cfg
}
