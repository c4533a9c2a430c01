package receiver

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/controlplane"
	"github.com/kuvryn/kuvryn-sync/services/web/internal/serve"
)

// The suite runs one real API server. Each test gets its own namespace and
// its own receiver, served by a real HTTP server on loopback, reading
// through a manager's cache of the whole cluster, as in the service, as the
// web ServiceAccount holding only the web ClusterRole of deploy/rbac and
// held to its admission policy, so a missing permission or a write the
// policy refuses fails the test.
var (
	cp    *controlplane.ControlPlane
	admin client.Client
	// webNamespaceRole is the web Role of deploy/rbac, which the file
	// places in the service's namespace; grantNamespaceRole puts it in a
	// test's.
	webNamespaceRole *unstructured.Unstructured
)

// receiverUser is the web ServiceAccount that deploy/rbac binds to the web
// ClusterRole and that its admission policy names; the suite's bindings of
// it are named testBinding.
const (
	receiverUser = "system:serviceaccount:kuvryn-sync-system:kuvryn-sync-web"
	testBinding  = "kuvryn-web-test"
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Verbose() {
		ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.WriteTo(os.Stderr)))
	} else {
		ctrl.SetLogger(logr.Discard())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	var err error
	cp, err = controlplane.Start(ctx, controlplane.Options{})
	if err == nil {
		admin, err = client.New(cp.Config, client.Options{Scheme: manager.Scheme()})
	}
	if err == nil {
		err = bindWebRole(ctx)
	}
	if err == nil {
		err = installStampsOnlyPolicy(ctx)
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

// bindWebRole installs the web ClusterRole of deploy/rbac and binds it to
// receiverUser.
func bindWebRole(ctx context.Context) error {
	objs, err := rbacManifests("web_role.yaml")
	if err != nil {
		return err
	}
	var role string
	for _, u := range objs {
		if u.GetKind() == "Role" {
			webNamespaceRole = u
		}
		if u.GetKind() != "ClusterRole" {
			continue
		}
		role = u.GetName()
		if err := admin.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("receiver-test")); err != nil {
			return err
		}
	}
	if role == "" || webNamespaceRole == nil {
		return errors.New("deploy/rbac/web_role.yaml holds no ClusterRole or no Role")
	}
	return admin.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: testBinding},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: receiverUser}},
	})
}

// rbacManifests reads the objects of deploy/rbac/<file>.
func rbacManifests(file string) ([]*unstructured.Unstructured, error) {
	root, err := controlplane.RepoRoot()
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(root, "deploy", "rbac", file))
	if err != nil {
		return nil, err
	}
	return controlplane.DecodeManifests(data)
}

// installStampsOnlyPolicy installs the admission policy of deploy/rbac
// that lets the web ServiceAccount change nothing but its stamps, and the
// ServiceAccount that is its parameter, and waits until the policy refuses
// a change of spec.
func installStampsOnlyPolicy(ctx context.Context) error {
	objs, err := rbacManifests("web_stamps_only_policy.yaml")
	if err != nil {
		return err
	}
	ns, name, _ := strings.Cut(strings.TrimPrefix(receiverUser, "system:serviceaccount:"), ":")
	if err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return err
	}
	if err := admin.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
		return err
	}
	for _, u := range objs {
		if err := admin.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("receiver-test")); err != nil {
			return err
		}
	}
	probe := &syncv1.Repository{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "policy-probe"},
		Spec:       syncv1.RepositorySpec{Git: syncv1.GitSource{URL: "https://github.com/acme/probe"}},
	}
	if err := admin.Create(ctx, probe); err != nil {
		return err
	}
	web, err := client.New(cp.Impersonate(receiverUser), client.Options{Scheme: manager.Scheme()})
	if err != nil {
		return err
	}
	// The policy takes effect a moment after it is installed; a dry run
	// leaves the probe unchanged until it does.
	for {
		err := web.Patch(ctx, probe, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"pollInterval":"2h"}}`)), client.DryRunAll)
		if err != nil && strings.Contains(err.Error(), "kuvryn-sync-web-stamps-only") {
			return admin.Delete(ctx, probe)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the policy of web_stamps_only_policy.yaml never refused a change of spec (last: %v)", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// grantNamespaceRole creates the web Role of deploy/rbac in ns and binds it
// to receiverUser.
func grantNamespaceRole(t testing.TB, ns string) {
	t.Helper()
	ctx := context.Background()
	role := webNamespaceRole.DeepCopy()
	role.SetNamespace(ns)
	must(t, admin.Create(ctx, role))
	must(t, admin.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: testBinding},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.GetName()},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: receiverUser}},
	}))
}

// fixture is one test's namespace and running receiver.
type fixture struct {
	t   testing.TB
	ns  string
	url string
	// addr is host:port of the listener.
	addr string
	reg  *prometheus.Registry
	rc   *Receiver
	// replicas counts the receiver Service's ready endpoints, if asked.
	replicas *Replicas
}

type fixtureOptions struct {
	// now freezes the receiver's clock, so no bucket refills during a test.
	now func() time.Time
	// wrap wraps the receiver's handler.
	wrap func(http.Handler) http.Handler
	// transport wraps the receiver's connection to the API server.
	transport func(http.RoundTripper) http.RoundTripper
	// namespace is an existing namespace to serve, shared with other
	// receivers; empty: a new one.
	namespace string
	// service, if set, names the receiver's Service in the namespace, whose
	// ready endpoints divide the rate limits.
	service string
}

// start creates a namespace and serves a receiver for it on loopback.
func start(t testing.TB, o fixtureOptions) *fixture {
	t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "receiver-", Name: o.namespace}}
	if o.namespace == "" {
		must(t, admin.Create(ctx, ns))
		t.Cleanup(func() { _ = admin.Delete(context.Background(), ns) })
	}

	cfg := cp.Impersonate(receiverUser)
	cfg.WrapTransport = o.transport
	// No client-side rate limit, as in the service (pkg/manager).
	cfg.QPS = -1
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 manager.Scheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	must(t, err)
	reg := prometheus.NewRegistry()
	opts := Options{Client: mgr.GetClient(), Secrets: mgr.GetAPIReader(), Registerer: reg,
		Log: ctrl.Log.WithName("receiver").WithName(ns.Name), Now: o.now}
	var replicas *Replicas
	if o.service != "" {
		replicas, err = NewReplicas(cfg, mgr.GetScheme(), types.NamespacedName{Namespace: ns.Name, Name: o.service})
		must(t, err)
		must(t, mgr.Add(replicas))
		opts.Replicas = replicas.Count
	}
	rc, err := New(opts)
	must(t, err)
	h := rc.Handler()
	if o.wrap != nil {
		h = o.wrap(h)
	}
	l := &serve.Listener{Name: "webhook-receiver", Addr: "127.0.0.1:0", Handler: h,
		Before: func(ctx context.Context) error {
			if replicas != nil {
				if err := replicas.WaitForSync(ctx); err != nil {
					return err
				}
			}
			return Informers(ctx, mgr.GetCache())
		}}
	must(t, mgr.Add(l))
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(runCtx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager stopped with: %v", err)
		}
	})
	deadline := time.Now().Add(time.Minute)
	for l.Ready(nil) != nil {
		select {
		case err := <-done:
			t.Fatalf("manager stopped before the receiver listened: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the receiver did not listen within a minute")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return &fixture{t: t, ns: ns.Name, url: "http://" + l.BoundAddr(), addr: l.BoundAddr(), reg: reg, rc: rc, replicas: replicas}
}

// secret creates a webhook Secret holding token.
func (f *fixture) secret(name, token string) {
	f.t.Helper()
	must(f.t, admin.Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name},
		Data:       map[string][]byte{TokenKey: []byte(token)},
	}))
}

// repository creates a Repository following url whose webhook Secret is
// secretName; "" leaves spec.webhook unset.
func (f *fixture) repository(name, url, secretName string) {
	f.t.Helper()
	f.previewRepository(name, url, secretName, nil)
}

// previewRepository creates a Repository as repository does, with
// spec.previews.
func (f *fixture) previewRepository(name, url, secretName string, previews *syncv1.PreviewsSpec) {
	f.t.Helper()
	repo := &syncv1.Repository{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name},
		Spec:       syncv1.RepositorySpec{Git: syncv1.GitSource{URL: url}, Previews: previews},
	}
	if secretName != "" {
		repo.Spec.Webhook = &syncv1.WebhookSpec{SecretRef: syncv1.LocalObjectReference{Name: secretName}}
	}
	must(f.t, admin.Create(context.Background(), repo))
	f.waitCached(repo)
}

// webhookRepositories creates the Repository platform, following
// github.com/acme/platform with the webhook Secret hook (token s3cret), and
// three whose webhook yields no token: no-webhook without spec.webhook,
// no-secret naming a missing Secret, and empty-token naming a Secret with
// an empty token.
func (f *fixture) webhookRepositories() {
	f.t.Helper()
	f.secret("hook", "s3cret")
	f.repository("platform", "https://github.com/acme/platform", "hook")
	f.repository("no-webhook", "https://github.com/acme/platform", "")
	f.repository("no-secret", "https://github.com/acme/platform", "missing")
	f.secret("empty", "")
	f.repository("empty-token", "https://github.com/acme/platform", "empty")
}

// imagePolicy creates an ImagePolicy whose webhook Secret is secretName.
func (f *fixture) imagePolicy(name, secretName string) {
	f.t.Helper()
	p := &syncv1.ImagePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name},
		Spec: syncv1.ImagePolicySpec{
			Image:   "ghcr.io/acme/api",
			Policy:  syncv1.ImageSelectionPolicy{SemVer: &syncv1.SemVerPolicy{Range: ">=1.0.0"}},
			Webhook: &syncv1.WebhookSpec{SecretRef: syncv1.LocalObjectReference{Name: secretName}},
		},
	}
	must(f.t, admin.Create(context.Background(), p))
	f.waitCached(p)
}

// waitCached waits until the receiver's cache holds obj.
func (f *fixture) waitCached(obj client.Object) {
	f.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for f.rc.client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object)) != nil {
		if time.Now().After(deadline) {
			f.t.Fatalf("%s never reached the receiver's cache", obj.GetName())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// response is what a request got.
type response struct {
	status int
	header http.Header
	body   string
}

// post sends body to path with the given headers.
func (f *fixture) post(path string, header map[string]string, body []byte) response {
	f.t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.url+path, bytes.NewReader(body))
	must(f.t, err)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	must(f.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must(f.t, err)
	return response{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// raw sends a request over its own connection and returns the response
// exactly as the server wrote it.
func (f *fixture) raw(path string, header map[string]string, body []byte) []byte {
	f.t.Helper()
	conn, err := net.Dial("tcp", f.addr)
	must(f.t, err)
	defer conn.Close()
	must(f.t, conn.SetDeadline(time.Now().Add(30*time.Second)))
	var b bytes.Buffer
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\nContent-Length: %d\r\n", path, f.addr, len(body))
	for k, v := range header {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	b.WriteString("\r\n")
	b.Write(body)
	_, err = conn.Write(b.Bytes())
	must(f.t, err)
	out, err := io.ReadAll(bufio.NewReader(conn))
	must(f.t, err)
	return out
}

// counts reads the request counter by result. It cannot fail, so it never
// calls f.t, which a fuzz target may not.
func (f *fixture) counts() map[string]int {
	out := map[string]int{}
	for _, r := range results {
		out[string(r)] = int(testutil.ToFloat64(f.rc.requests.WithLabelValues(string(r))))
	}
	return out
}

// annotation reads obj's annotation as admin.
func (f *fixture) annotation(obj client.Object, name, annotation string) string {
	f.t.Helper()
	must(f.t, admin.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: name}, obj))
	return obj.GetAnnotations()[annotation]
}

// sign is the GitHub X-Hub-Signature-256 of body with token.
func sign(body []byte, token string) string {
	mac := hmac.New(sha256.New, []byte(token))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// githubPush is a GitHub push payload for a repository at
// https://github.com/<fullName>, in the shape GitHub sends.
func githubPush(fullName string) []byte {
	return []byte(fmt.Sprintf(`{"ref":"refs/heads/main","before":"6113728f27ae82c7b1a177c8d03f9e96e0adf246","after":"0000000000000000000000000000000000000000",
"repository":{"id":186853002,"name":%[2]q,"full_name":%[1]q,"private":false,
"html_url":"https://github.com/%[1]s","url":"https://github.com/%[1]s",
"git_url":"git://github.com/%[1]s.git","ssh_url":"git@github.com:%[1]s.git","clone_url":"https://github.com/%[1]s.git",
"svn_url":"https://github.com/%[1]s","created_at":1557933565,"pushed_at":1557933657},
"pusher":{"name":"Codertocat","email":"21031067+Codertocat@users.noreply.github.com"},
"commits":[],"head_commit":null}`, fullName, fullName[strings.LastIndex(fullName, "/")+1:]))
}

// gitlabPush is a GitLab push payload for a project at
// https://gitlab.example.com/<path>.
func gitlabPush(path string) []byte {
	return []byte(fmt.Sprintf(`{"object_kind":"push","event_name":"push","ref":"refs/heads/main","user_username":"jsmith",
"project":{"id":15,"name":"app","web_url":"https://gitlab.example.com/%[1]s",
"git_ssh_url":"git@gitlab.example.com:%[1]s.git","git_http_url":"https://gitlab.example.com/%[1]s.git",
"path_with_namespace":%[1]q,"default_branch":"main"},
"repository":{"name":"app","url":"git@gitlab.example.com:%[1]s.git","homepage":"https://gitlab.example.com/%[1]s",
"git_http_url":"https://gitlab.example.com/%[1]s.git","git_ssh_url":"git@gitlab.example.com:%[1]s.git"},
"commits":[],"total_commits_count":0}`, path))
}

// githubPullRequest is a GitHub pull_request event of action for pull
// request number, head commit sha on branch feature/new-image, whose base
// is https://github.com/<fullName> and whose head is in headFullName ("":
// a deleted fork), in the shape GitHub sends.
func githubPullRequest(fullName, action string, number int, sha, headFullName string) []byte {
	headRepo := "null"
	if headFullName != "" {
		headRepo = fmt.Sprintf(`{"id":1296269,"full_name":%q,"clone_url":"https://github.com/%[1]s.git"}`, headFullName)
	}
	return []byte(fmt.Sprintf(`{"action":%[2]q,"number":%[3]d,"pull_request":{"url":"https://api.github.com/repos/%[1]s/pulls/%[3]d",
"id":1,"number":%[3]d,"state":"open","locked":false,"title":"Bump the api image","user":{"login":"octocat"},
"head":{"label":"octocat:feature/new-image","ref":"feature/new-image","sha":%[4]q,"repo":%[5]s},
"base":{"label":"acme:main","ref":"main","sha":"9049f1265b7d61be4a8904a9a27120d2064dab3b",
"repo":{"id":186853002,"full_name":%[1]q,"clone_url":"https://github.com/%[1]s.git"}},"merged":false},
"repository":{"id":186853002,"full_name":%[1]q,"html_url":"https://github.com/%[1]s","clone_url":"https://github.com/%[1]s.git",
"ssh_url":"git@github.com:%[1]s.git"},"sender":{"login":"octocat"}}`, fullName, action, number, sha, headRepo))
}

// gitlabMergeRequest is a GitLab Merge Request Hook of action for merge
// request iid, head commit sha on branch ms-viewport, from project source
// into project target, at https://gitlab.example.com/<path>.
func gitlabMergeRequest(path, action string, iid int, sha string, source, target int) []byte {
	return []byte(fmt.Sprintf(`{"object_kind":"merge_request","event_type":"merge_request","user":{"username":"root"},
"project":{"id":%[6]d,"web_url":"https://gitlab.example.com/%[1]s","git_ssh_url":"git@gitlab.example.com:%[1]s.git",
"git_http_url":"https://gitlab.example.com/%[1]s.git","path_with_namespace":%[1]q},
"object_attributes":{"id":99,"iid":%[3]d,"target_branch":"main","source_branch":"ms-viewport","source_project_id":%[5]d,
"target_project_id":%[6]d,"state":"opened","last_commit":{"id":%[4]q,"message":"fixed readme"},"action":%[2]q},
"repository":{"name":"platform","url":"git@gitlab.example.com:%[1]s.git","homepage":"https://gitlab.example.com/%[1]s"}}`,
		path, action, iid, sha, source, target))
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}
