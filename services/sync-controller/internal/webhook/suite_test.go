package webhook_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/controlplane"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/webhook"
)

var (
	cp    *controlplane.ControlPlane
	admin client.Client
	// alice and carol authenticate with their own client certificates;
	// bob is impersonated by the admin.
	alice, bob, carol client.Client
	// certDir holds the webhook serving certificate, and caBundle the CA
	// that signed it.
	certDir  string
	caBundle []byte
	// webhookPort is where the registered configurations send requests.
	webhookPort int
	// stopWebhook stops the manager serving the registered webhooks.
	stopWebhook func()
	logs        = &logBuffer{}
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctrl.SetLogger(funcr.New(logs.add, funcr.Options{}))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var err error
	if cp, err = controlplane.Start(ctx, controlplane.Options{}); err != nil {
		fmt.Println("starting the control plane:", err)
		return 1
	}
	defer func() {
		if err := cp.Stop(); err != nil {
			fmt.Println("stopping the control plane:", err)
		}
	}()
	defer func() {
		if certDir != "" {
			_ = os.RemoveAll(certDir)
		}
	}()
	if err := setUp(ctx); err != nil {
		fmt.Println(err)
		return 1
	}
	defer func() { stopWebhook() }()
	code := m.Run()
	if code != 0 {
		fmt.Println("===== logs =====")
		fmt.Println(logs.String())
	}
	return code
}

func setUp(ctx context.Context) error {
	scheme := manager.Scheme()
	var err error
	if admin, err = client.New(cp.Config, client.Options{Scheme: scheme}); err != nil {
		return err
	}
	for user, c := range map[string]*client.Client{"alice": &alice, "carol": &carol} {
		cfg, err := cp.AddUser(user)
		if err != nil {
			return fmt.Errorf("adding user %s: %w", user, err)
		}
		if *c, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
			return err
		}
	}
	if bob, err = client.New(cp.Impersonate("bob"), client.Options{Scheme: scheme}); err != nil {
		return err
	}

	if certDir, err = os.MkdirTemp("", "kuvryn-webhook-certs-"); err != nil {
		return err
	}
	if caBundle, err = controlplane.WebhookCertificates(certDir); err != nil {
		return err
	}
	if webhookPort, err = controlplane.FreePort(); err != nil {
		return err
	}
	root, err := controlplane.RepoRoot()
	if err != nil {
		return err
	}
	if err := controlplane.RegisterWebhooks(ctx, admin, root, webhookPort, caBundle); err != nil {
		return fmt.Errorf("registering the webhooks: %w", err)
	}
	if stopWebhook, err = startManager(webhookPort); err != nil {
		return err
	}
	return controlplane.WaitForWebhooks(ctx, admin, "default", time.Minute)
}

// startManager starts a sync-controller manager with only the webhooks,
// serving on 127.0.0.1:port, and returns a function that stops it and
// waits until it has.
func startManager(port int) (stop func(), err error) {
	mgr, err := manager.NewWithOptions(manager.Service{Name: "sync-controller"}, manager.Options{
		MetricsBindAddress:     "0",
		HealthProbeBindAddress: "0",
		WebhookBindAddress:     net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		WebhookCertPath:        certDir,
		WebhookCertName:        "tls.crt",
		WebhookCertKey:         "tls.key",
	}, cp.Config)
	if err != nil {
		return nil, err
	}
	if err := webhook.Setup(mgr, mgr.GetAPIReader()); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			fmt.Println("manager stopped:", err)
		}
	}, nil
}

// logBuffer collects the log lines of every manager in this process.
type logBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (b *logBuffer) add(prefix, args string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lines = append(b.lines, prefix+" "+args)
}

// since returns the lines logged after the first n.
func (b *logBuffer) since(n int) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.lines[n:]...)
}

func (b *logBuffer) len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.lines)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}

// namespace creates a namespace in which alice and bob may get, update and
// patch Applications, and carol may only get them.
func namespace(t *testing.T) string {
	t.Helper()
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "approvals-"}}
	if err := admin.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	roles := []struct {
		name  string
		verbs []string
		users []string
	}{
		{"approver", []string{"get", "update", "patch"}, []string{"alice", "bob"}},
		{"viewer", []string{"get"}, []string{"carol"}},
	}
	for _, r := range roles {
		role := &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: r.name, Namespace: ns.Name},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{syncv1.GroupVersion.Group}, Resources: []string{"applications"}, Verbs: r.verbs}},
		}
		binding := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: r.name, Namespace: ns.Name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: r.name},
		}
		for _, u := range r.users {
			binding.Subjects = append(binding.Subjects, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: u})
		}
		for _, obj := range []client.Object{role, binding} {
			if err := admin.Create(ctx, obj); err != nil {
				t.Fatal(err)
			}
		}
	}
	return ns.Name
}

// digest is a well-formed sha256 digest derived from s.
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// revision creates a Revision of application. A non-empty plan is written to
// status.plan.digest through the status subresource as admin: it stands in
// for the sync-controller's planner, which does not run in these tests.
func revision(t *testing.T, ns, name, application, plan string) *syncv1.Revision {
	t.Helper()
	rev := &syncv1.Revision{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: syncv1.RevisionSpec{
			ApplicationName: application,
			DesiredState:    syncv1.DesiredStateRef{SecretName: name + "-desired-state", Digest: digest("desired " + ns + "/" + name), Objects: 1},
		},
	}
	if err := admin.Create(t.Context(), rev); err != nil {
		t.Fatal(err)
	}
	if plan != "" {
		setPlan(t, rev, plan)
	}
	return rev
}

// setPlan writes status.plan.digest as the sync-controller's planner would
// after planning again.
func setPlan(t *testing.T, rev *syncv1.Revision, plan string) {
	t.Helper()
	rev.Status.Plan = &syncv1.Plan{Digest: plan, PlannedAt: metav1.Now(), Summary: syncv1.PlanSummary{Update: 1}}
	if err := admin.Status().Update(t.Context(), rev); err != nil {
		t.Fatal(err)
	}
}

// application creates a manual Application as admin.
func application(t *testing.T, ns, name string, annotations map[string]string) *syncv1.Application {
	t.Helper()
	app := newApplication(ns, name, annotations)
	if err := admin.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	return app
}

func newApplication(ns, name string, annotations map[string]string) *syncv1.Application {
	return &syncv1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: annotations},
		Spec: syncv1.ApplicationSpec{
			Source: syncv1.ApplicationSource{RepositoryRef: syncv1.LocalObjectReference{Name: "platform"}},
			Sync:   syncv1.SyncPolicy{Automatic: false},
		},
	}
}

// annotate sends a JSON merge patch of annotations as c's user, the way
// `kubectl annotate` and ksync do; a nil value removes the annotation.
func annotate(ctx context.Context, c client.Client, ns, name string, annotations map[string]*string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	if err != nil {
		return err
	}
	app := &syncv1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	return c.Patch(ctx, app, client.RawPatch(types.MergePatchType, patch))
}

// mustAnnotate is annotate that fails the test on error.
func mustAnnotate(t *testing.T, c client.Client, ns, name string, annotations map[string]*string) {
	t.Helper()
	if err := annotate(t.Context(), c, ns, name, annotations); err != nil {
		t.Fatalf("annotating Application %s/%s: %v", ns, name, err)
	}
}

// stored returns the Application's annotations as stored.
func stored(t *testing.T, ns, name string) map[string]string {
	t.Helper()
	app := &syncv1.Application{}
	if err := admin.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, app); err != nil {
		t.Fatal(err)
	}
	return app.Annotations
}

func ptr(s string) *string { return &s }

// recordedAt parses a record's RFC 3339 time and checks it lies within
// [from, to], at second precision.
func recordedAt(t *testing.T, annotations map[string]string, key string, from, to time.Time) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339, annotations[key])
	if err != nil {
		t.Fatalf("annotation %s: %v", key, err)
	}
	if at.Location() != time.UTC {
		t.Errorf("annotation %s = %q, want UTC", key, annotations[key])
	}
	if at.Before(from.Truncate(time.Second)) || at.After(to) {
		t.Errorf("annotation %s = %s, want between %s and %s", key, at, from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339))
	}
	return at
}

// wantRecords compares the named annotations with want; an empty want value
// means the annotation must be absent.
func wantRecords(t *testing.T, got map[string]string, want map[string]string) {
	t.Helper()
	for k, w := range want {
		v, ok := got[k]
		switch {
		case w == "" && ok:
			t.Errorf("annotation %s = %q, want it absent", k, v)
		case w != "" && v != w:
			t.Errorf("annotation %s = %q, want %q", k, v, w)
		}
	}
}

// wantDenied checks that err is a denial by an admission webhook whose
// message contains every part.
func wantDenied(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("request allowed, want it denied by the admission webhook")
	}
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "denied the request") {
		t.Fatalf("error = %v, want a denial by the admission webhook", err)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("denial %q does not contain %q", err, p)
		}
	}
}
