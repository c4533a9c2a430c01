package controller

import (
	"context"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
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
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/pkg/ssa"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/controlplane"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/logbuffer"
	"github.com/kuvryn/kuvryn-sync/services/notify-controller/internal/delivery"
)

// The suite runs one API server. Each test works in its own namespace with
// its own manager, authenticated as a user bound only to the ClusterRole of
// deploy/rbac, so a permission the controller lacks fails the test. Every
// log line of every controller goes to logs, which tests search for URLs.
var (
	cp         *controlplane.ControlPlane
	admin      client.Client
	controller *rest.Config
	logs       logbuffer.Buffer
)

const timeout = 2 * time.Minute

func TestMain(m *testing.M) {
	flag.Parse()
	var out io.Writer = &logs
	if testing.Verbose() {
		out = io.MultiWriter(&logs, os.Stderr)
	}
	ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.WriteTo(out)))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	var err error
	cp, err = controlplane.Start(ctx, controlplane.Options{})
	if err == nil {
		admin, err = client.New(cp.Config, client.Options{Scheme: manager.Scheme()})
	}
	if err == nil {
		controller, err = restrictedIdentity(ctx)
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

// restrictedIdentity is a user bound to the rules of the notify-controller's
// ClusterRole in deploy/rbac.
func restrictedIdentity(ctx context.Context) (*rest.Config, error) {
	root, err := controlplane.RepoRoot()
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(root, "deploy", "rbac", "notify_controller_role.yaml"))
	if err != nil {
		return nil, err
	}
	objs, err := controlplane.DecodeManifests(data)
	if err != nil {
		return nil, err
	}
	const user = "notify-controller-test"
	for _, u := range objs {
		if u.GetKind() != "ClusterRole" {
			continue
		}
		role := &rbacv1.ClusterRole{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, role); err != nil {
			return nil, err
		}
		role.Name = user
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: user},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
		}
		if err := admin.Create(ctx, role); err != nil {
			return nil, err
		}
		if err := admin.Create(ctx, binding); err != nil {
			return nil, err
		}
		return cp.AddUser(user)
	}
	return nil, errors.New("deploy/rbac/notify_controller_role.yaml holds no ClusterRole")
}

// testEnv is one test's namespace and controller.
type testEnv struct {
	t  *testing.T
	ns string
}

func newEnv(t *testing.T) *testEnv {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "notify-"}}
	must(t, admin.Create(t.Context(), ns))
	t.Cleanup(func() { _ = admin.Delete(context.Background(), ns) })
	return &testEnv{t: t, ns: ns.Name}
}

// testDelivery paces attempts for tests; one worker keeps deliveries in
// the order they were queued.
func testDelivery(roots *x509.CertPool) delivery.Options {
	return delivery.Options{QueueSize: 100, Workers: 1, Backoff: 50 * time.Millisecond, Timeout: 5 * time.Second, RootCAs: roots}
}

// startController starts a manager running the controllers over the test's
// namespace; the returned function stops it and waits until it stopped.
func (e *testEnv) startController(o Options) (c *Controllers, stop func()) {
	e.t.Helper()
	mgr, err := ctrl.NewManager(controller, ctrl.Options{
		Scheme:                 manager.Scheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{e.ns: {}}},
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	must(e.t, err)
	ctx, cancel := context.WithCancel(context.Background())
	c, err = Setup(ctx, mgr, o)
	must(e.t, err)
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
	e.eventually("controllers ready", func() bool {
		return c.ready(httptest.NewRequest(http.MethodGet, "/readyz", nil)) == nil
	}, nil)
	return c, stop
}

// receiver is an https sink on loopback that records what it gets and
// answers with status (200 if zero).
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	requests []received
	status   int
	// hold, when set, blocks every request until it is closed.
	hold chan struct{}
}

type received struct {
	path   string
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T, status int) *receiver {
	t.Helper()
	r := &receiver{status: status}
	r.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.requests = append(r.requests, received{path: req.URL.Path, header: req.Header.Clone(), body: body})
		status, hold := r.status, r.hold
		r.mu.Unlock()
		if hold != nil {
			<-hold
		}
		if status == http.StatusFound {
			w.Header().Set("Location", "https://"+req.Host+"/elsewhere")
		}
		if status != 0 {
			w.WriteHeader(status)
		}
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) got() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.requests...)
}

// roots trusts the receivers' certificate (every httptest TLS server has the same).
func (r *receiver) roots() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(r.Certificate())
	return pool
}

// secretPath is in every sink URL, standing for a Slack URL's credential.
const secretPath = "/services/T0SECRET/B0SECRET/xoxsecrettoken"

// url is the receiver's sink URL.
func (r *receiver) url() string { return r.URL + secretPath }

// createSink creates a Secret with url and, if set, hmacKey, and a sink reading it.
func (e *testEnv) createSink(name string, typ syncv1.SinkType, url, hmacKey string) {
	e.t.Helper()
	data := map[string]string{"url": url}
	if hmacKey != "" {
		data["hmacKey"] = hmacKey
	}
	must(e.t, admin.Create(e.t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name + "-sink"}, StringData: data}))
	must(e.t, admin.Create(e.t.Context(), &syncv1.NotificationSink{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Spec:       syncv1.NotificationSinkSpec{Type: typ, SecretRef: syncv1.LocalObjectReference{Name: name + "-sink"}},
	}))
}

// createApplication creates a manual Application subscribing sink to events.
func (e *testEnv) createApplication(name, sink string, events ...syncv1.NotificationEvent) *syncv1.Application {
	e.t.Helper()
	app := &syncv1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Spec: syncv1.ApplicationSpec{
			Source:        syncv1.ApplicationSource{RepositoryRef: syncv1.LocalObjectReference{Name: "repo"}},
			Notifications: []syncv1.NotificationSubscription{{SinkRef: syncv1.LocalObjectReference{Name: sink}, Events: events}},
		},
	}
	must(e.t, admin.Create(e.t.Context(), app))
	return app
}

// createRevision creates a Revision of app rendered from commit, as the
// source-controller does.
func (e *testEnv) createRevision(app, name string) *syncv1.Revision {
	e.t.Helper()
	rev := &syncv1.Revision{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name, Labels: map[string]string{syncv1.ApplicationLabel: app}},
		Spec: syncv1.RevisionSpec{
			ApplicationName: app,
			DesiredState:    syncv1.DesiredStateRef{SecretName: name, Digest: "sha256:" + strings.Repeat("ab", 32), Objects: 1},
			Source:          &syncv1.RevisionSource{Commit: commit, RenderedAt: metav1.Now()},
		},
	}
	must(e.t, admin.Create(e.t.Context(), rev))
	return rev
}

// Revision states as the sync-controller writes them.
const commit = "0123456789abcdef0123456789abcdef01234567"

var plan = &syncv1.Plan{Digest: "sha256:" + strings.Repeat("cd", 32), PlannedAt: metav1.Now(), Summary: syncv1.PlanSummary{Create: 2, Update: 1}}

func awaitingApproval(rev string) *syncv1.RevisionStatus {
	return &syncv1.RevisionStatus{
		Phase: syncv1.PhaseAwaitingApproval, Plan: plan,
		Conditions: []metav1.Condition{
			cond(syncv1.ConditionPlanned, true, syncv1.ReasonSucceeded, "planned"),
			cond(syncv1.ConditionAwaitingApproval, true, syncv1.ReasonAwaitingApproval, "Revision "+rev+" waits for approval of plan "+plan.Digest),
		},
	}
}

func applying(attempt int32) *syncv1.RevisionStatus {
	return &syncv1.RevisionStatus{
		Phase: syncv1.PhaseApplying, Plan: plan, Attempt: attempt,
		Conditions: []metav1.Condition{
			cond(syncv1.ConditionPlanned, true, syncv1.ReasonSucceeded, "planned"),
			approvedWait(),
			cond(syncv1.ConditionRolloutComplete, false, syncv1.ReasonProgressing, fmt.Sprintf("attempt %d: 1 wave(s)", attempt)),
		},
	}
}

func healthy(attempt int32) *syncv1.RevisionStatus {
	return &syncv1.RevisionStatus{
		Phase: syncv1.PhaseHealthy, Plan: plan, Attempt: attempt, Health: syncv1.HealthHealthy,
		Conditions: []metav1.Condition{
			cond(syncv1.ConditionPlanned, true, syncv1.ReasonSucceeded, "planned"),
			approvedWait(),
			cond(syncv1.ConditionRolloutComplete, true, syncv1.ReasonSucceeded, fmt.Sprintf("attempt %d: every group is Healthy", attempt)),
			cond(syncv1.ConditionHealthy, true, syncv1.ReasonSucceeded, "every applied object is Healthy"),
		},
	}
}

// approvedWait is the AwaitingApproval condition once approved: the
// sync-controller leaves it True, the phase moves on.
func approvedWait() metav1.Condition {
	return cond(syncv1.ConditionAwaitingApproval, true, syncv1.ReasonAwaitingApproval, "Revision api-1 waits for approval of plan "+plan.Digest)
}

func cond(typ string, ok bool, reason, msg string) metav1.Condition {
	return ssa.Condition(typ, ok, reason, msg, 1)
}

// setStatus writes a Revision's status as the sync-controller does, keeping
// the transition time of conditions whose status did not change.
func (e *testEnv) setStatus(name string, st *syncv1.RevisionStatus) {
	e.t.Helper()
	rev := &syncv1.Revision{}
	must(e.t, admin.Get(e.t.Context(), client.ObjectKey{Namespace: e.ns, Name: name}, rev))
	for i := range st.Conditions {
		c := &st.Conditions[i]
		if old := meta.FindStatusCondition(rev.Status.Conditions, c.Type); old != nil && old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		} else {
			c.LastTransitionTime = metav1.Now()
		}
	}
	must(e.t, ssa.ApplyStatus(e.t.Context(), admin, rev, syncv1.FieldManagerSync, st))
}

func (e *testEnv) application(name string) *syncv1.Application {
	e.t.Helper()
	app := &syncv1.Application{}
	must(e.t, admin.Get(e.t.Context(), client.ObjectKey{Namespace: e.ns, Name: name}, app))
	return app
}

// events lists the Events in the test's namespace with reason.
func (e *testEnv) events(reason string) []eventsv1.Event {
	e.t.Helper()
	var list eventsv1.EventList
	must(e.t, admin.List(e.t.Context(), &list, client.InNamespace(e.ns)))
	var found []eventsv1.Event
	for _, ev := range list.Items {
		if reason == "" || ev.Reason == reason {
			found = append(found, ev)
		}
	}
	return found
}

// deliveries reads kuvryn_sync_notification_deliveries_total.
func deliveries(typ syncv1.SinkType, result string) float64 {
	return testutil.ToFloat64(delivery.Deliveries.WithLabelValues(string(typ), result))
}

// explain shows the namespace's Applications, Revisions and sinks, and the
// Events, for a test that timed out.
func (e *testEnv) explain() string {
	var b strings.Builder
	for _, list := range []client.ObjectList{&syncv1.ApplicationList{}, &syncv1.RevisionList{}, &syncv1.NotificationSinkList{}, &eventsv1.EventList{}} {
		if err := admin.List(context.Background(), list, client.InNamespace(e.ns)); err != nil {
			fmt.Fprintf(&b, "%v\n", err)
			continue
		}
		out, _ := yaml.Marshal(list)
		b.Write(out)
	}
	return b.String()
}

func (e *testEnv) eventually(what string, cond func() bool, explain func() string) {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			msg := ""
			if explain != nil {
				msg = "\n" + explain()
			}
			e.t.Fatalf("timed out after %s waiting for %s%s", timeout, what, msg)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}
