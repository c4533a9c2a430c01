package console

import (
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/controlplane"
)

// The suite runs one real API server. The console under test runs as a
// user holding only the common, web and web-console roles of deploy/rbac,
// and people sign in with ServiceAccount tokens the API server issued,
// bound (or not) to the viewer ClusterRole of deploy/rbac.
var (
	cp        *controlplane.ControlPlane
	admin     client.Client
	clientset kubernetes.Interface
)

// consoleUser is the console's own identity in the tests.
const consoleUser = "kuvryn-web-console-test"

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Verbose() {
		ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.WriteTo(os.Stderr)))
	} else {
		ctrl.SetLogger(logr.Discard())
	}
	// The package's fuzz targets (FuzzOpenSession, FuzzResumeFrom) need no cluster.
	if controlplane.FuzzWorker() {
		os.Exit(m.Run())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	var err error
	cp, err = controlplane.Start(ctx, controlplane.Options{})
	if err == nil {
		admin, err = client.New(cp.Config, client.Options{Scheme: manager.Scheme()})
	}
	if err == nil {
		clientset, err = kubernetes.NewForConfig(cp.Config)
	}
	if err == nil {
		err = installRoles(ctx, admin)
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

// installRoles applies the common, web, web-console and viewer roles of
// deploy/rbac with admin and binds all but the viewer role to consoleUser.
func installRoles(ctx context.Context, admin client.Client) error {
	root, err := controlplane.RepoRoot()
	if err != nil {
		return err
	}
	if err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kuvryn-sync-system"}}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	for _, file := range []string{"common_role.yaml", "web_role.yaml", "web_console_role.yaml", "viewer_role.yaml"} {
		data, err := os.ReadFile(filepath.Join(root, "deploy", "rbac", file))
		if err != nil {
			return err
		}
		objs, err := controlplane.DecodeManifests(data)
		if err != nil {
			return err
		}
		for _, u := range objs {
			if u.GetKind() == "ClusterRoleBinding" || u.GetKind() == "RoleBinding" {
				continue
			}
			if err := admin.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("console-test")); err != nil {
				return err
			}
			if file == "viewer_role.yaml" {
				continue
			}
			if err := bindWith(ctx, admin, u.GetKind(), u.GetNamespace(), u.GetName(),
				rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: consoleUser}); err != nil {
				return err
			}
		}
	}
	return nil
}

// bind binds the (Cluster)Role to subject on the suite's API server.
func bind(ctx context.Context, kind, namespace, role string, subject rbacv1.Subject) error {
	return bindWith(ctx, admin, kind, namespace, role, subject)
}

// bindWith binds the (Cluster)Role to subject with admin.
func bindWith(ctx context.Context, admin client.Client, kind, namespace, role string, subject rbacv1.Subject) error {
	ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: role}
	meta := metav1.ObjectMeta{GenerateName: role + "-"}
	if kind == "Role" {
		meta.Namespace = namespace
		return admin.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: meta, RoleRef: ref, Subjects: []rbacv1.Subject{subject}})
	}
	return admin.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: meta, RoleRef: ref, Subjects: []rbacv1.Subject{subject}})
}

// fixture is one test's namespace and running console.
type fixture struct {
	t       testing.TB
	ns      string
	url     string
	console *Console
}

// start creates a namespace and serves a console on loopback.
func start(t testing.TB) *fixture {
	t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "console-"}}
	must(t, admin.Create(ctx, ns))
	t.Cleanup(func() { _ = admin.Delete(context.Background(), ns) })
	c := newConsole(t, cp, nil)
	srv := httptest.NewServer(c.Handler())
	t.Cleanup(srv.Close)
	return &fixture{t: t, ns: ns.Name, url: srv.URL, console: c}
}

// newConsole builds a console on cp as consoleUser with a fresh session
// key and, when oidc is set, sign-in with that issuer.
func newConsole(t testing.TB, cp *controlplane.ControlPlane, oidc *OIDCOptions) *Console {
	t.Helper()
	o := consoleOptions(t, cp)
	o.OIDC = oidc
	c, err := New(o)
	must(t, err)
	return c
}

// consoleOptions are a console's options as the test user, with a fresh
// session key.
func consoleOptions(t testing.TB, cp *controlplane.ControlPlane) Options {
	t.Helper()
	cfg := cp.Impersonate(consoleUser)
	hc, err := rest.HTTPClientFor(cfg)
	must(t, err)
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, hc)
	must(t, err)
	key := make([]byte, KeySize)
	_, err = rand.Read(key)
	must(t, err)
	return Options{Config: cfg, Mapper: mapper, Key: key, Log: ctrl.Log.WithName("console")}
}

// token creates a ServiceAccount in the fixture's namespace, binds it to
// the viewer ClusterRole when viewer is set, and returns a token for it.
func (f *fixture) token(name string, viewer bool) string {
	f.t.Helper()
	ctx := context.Background()
	must(f.t, admin.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name}}))
	if viewer {
		must(f.t, bind(ctx, "ClusterRole", "", "kuvryn-sync-viewer",
			rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: f.ns, Name: name}))
	}
	tr, err := clientset.CoreV1().ServiceAccounts(f.ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	must(f.t, err)
	return tr.Status.Token
}

// application creates an Application in the fixture's namespace and, when
// status is not nil, sets its status.
func (f *fixture) application(name string, annotations map[string]string, status *syncv1.ApplicationStatus) *syncv1.Application {
	f.t.Helper()
	ctx := context.Background()
	app := &syncv1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name, Annotations: annotations},
		Spec:       syncv1.ApplicationSpec{Source: syncv1.ApplicationSource{RepositoryRef: syncv1.LocalObjectReference{Name: "platform"}}},
	}
	must(f.t, admin.Create(ctx, app))
	if status != nil {
		app.Status = *status
		must(f.t, admin.Status().Update(ctx, app))
	}
	return app
}

// response is what a request got.
type response struct {
	status int
	header http.Header
	body   string
}

// do sends a request with the cookies and, for a form, its values.
func (f *fixture) do(method, path string, cookies []*http.Cookie, form url.Values) response {
	f.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, f.url+path, body)
	must(f.t, err)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	resp, err := noRedirects.Do(req)
	must(f.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must(f.t, err)
	return response{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// getOnceBound reads path until it answers status: RBAC takes effect once
// the API server's informers see a new binding, a moment after it exists.
func (f *fixture) getOnceBound(path string, s *http.Cookie, status int) response {
	f.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp := f.do(http.MethodGet, path, []*http.Cookie{s}, nil)
		if resp.status == status || time.Now().After(deadline) {
			return resp
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// noRedirects shows the tests every redirect the console answers.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// signInForm fetches the sign-in form: its CSRF cookie and field.
func (f *fixture) signInForm() (*http.Cookie, string) {
	f.t.Helper()
	resp := f.do(http.MethodGet, "/sign-in", nil, nil)
	m := csrfField.FindStringSubmatch(resp.body)
	if resp.status != http.StatusOK || m == nil {
		f.t.Fatalf("GET /sign-in: %d without a CSRF field:\n%s", resp.status, resp.body)
	}
	return cookieNamed(f.t, resp, csrfCookie), m[1]
}

// signIn signs in with token and returns the session cookie.
func (f *fixture) signIn(token string) *http.Cookie {
	f.t.Helper()
	ck, csrf := f.signInForm()
	resp := f.do(http.MethodPost, "/sign-in", []*http.Cookie{ck}, url.Values{"csrf": {csrf}, "token": {token}})
	if resp.status != http.StatusSeeOther {
		f.t.Fatalf("signing in: %d\n%s", resp.status, resp.body)
	}
	return cookieNamed(f.t, resp, sessionCookie)
}

func cookieNamed(t testing.TB, resp response, name string) *http.Cookie {
	t.Helper()
	for _, c := range (&http.Response{Header: resp.header}).Cookies() {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no %s cookie in %v", name, resp.header.Values("Set-Cookie"))
	return nil
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}
