package revision

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	cp, err = controlplane.Start(ctx, controlplane.Options{Full: true, ControllerManagerFlags: controlplane.ParallelTestsControllerManagerFlags})
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
	_, stop = e.startReconcilerAs(cfg, o)
	return stop
}

// startReconcilerAs is startControllerAs for a test that looks into the
// running Reconciler.
func (e *testEnv) startReconcilerAs(cfg *rest.Config, o Options) (r *Reconciler, stop func()) {
	e.t.Helper()
	return e.startReconcilerWith(cfg, o, nil)
}

// startReconcilerWith is startReconcilerAs with prepare run on the
// Reconciler before its manager starts.
func (e *testEnv) startReconcilerWith(cfg *rest.Config, o Options, prepare func(*Reconciler)) (r *Reconciler, stop func()) {
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
	r = New(mgr, o)
	if prepare != nil {
		prepare(r)
	}
	must(e.t, r.SetupWithManager(ctx, mgr))
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
	return r, stop
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
	name := e.createRevision(app, nil, objs...)
	appObj := &syncv1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: app}}
	must(e.t, ssa.ApplyStatus(e.t.Context(), admin, appObj, syncv1.FieldManagerSource, map[string]any{"desiredRevision": name}))
	return name
}

// createRevision creates a Revision of app, a preview Revision when preview
// is set, and the desired-state Secret it owns holding objs.
func (e *testEnv) createRevision(app string, preview *syncv1.RevisionPreview, objs ...*unstructured.Unstructured) string {
	e.t.Helper()
	ctx := e.t.Context()
	data, digest, err := desiredstate.Encode(objs)
	must(e.t, err)
	name := desiredstate.RevisionName(app, digest)
	labels := map[string]string{syncv1.ApplicationLabel: app}
	if preview != nil {
		name = desiredstate.PreviewRevisionName(app, preview.Name, digest, preview.Commit)
		labels[syncv1.PreviewLabel] = preview.Name
	}
	rev := &syncv1.Revision{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name, Labels: labels},
		Spec: syncv1.RevisionSpec{
			ApplicationName: app,
			DesiredState:    syncv1.DesiredStateRef{SecretName: name, Digest: digest, Objects: int32(len(objs))},
			Preview:         preview,
		},
	}
	if err := admin.Create(ctx, rev); err != nil && !apierrors.IsAlreadyExists(err) {
		e.t.Fatal(err)
	}
	must(e.t, admin.Get(ctx, client.ObjectKeyFromObject(rev), rev))
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: e.ns, Name: name, Labels: labels,
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
