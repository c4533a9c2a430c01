// Package apivalidation proves, against a real API server, that every Kuvryn
// Sync kind is accepted when valid and that each admission rule refuses a
// bad spec with a message naming the field.
package apivalidation_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/controlplane"
)

var (
	k8s client.Client
	// kubeconfig is the control plane's, for running bin/kubectl.
	kubeconfig string
	// config is the control plane's, for managers started by a test.
	config *rest.Config
)

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	cp, err := controlplane.Start(ctx, controlplane.Options{})
	cancel()
	if err != nil {
		println("starting control plane:", err.Error())
		os.Exit(1)
	}
	kubeconfig, config = cp.Kubeconfig, cp.Config
	k8s, err = client.New(cp.Config, client.Options{Scheme: manager.Scheme()})
	if err != nil {
		println(err.Error())
		os.Exit(1)
	}
	code := m.Run()
	_ = cp.Stop()
	os.Exit(code)
}

func namespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "api-"}}
	if err := k8s.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func validRepository(ns string) *syncv1.Repository {
	return &syncv1.Repository{
		ObjectMeta: metav1.ObjectMeta{Name: "platform", Namespace: ns},
		Spec: syncv1.RepositorySpec{
			Git:                    syncv1.GitSource{URL: "https://git.example.com/platform.git", Revision: "main"},
			PollInterval:           &metav1.Duration{Duration: time.Minute},
			Webhook:                &syncv1.WebhookSpec{SecretRef: syncv1.LocalObjectReference{Name: "platform-webhook"}},
			ImageUpdate:            &syncv1.ImageUpdateSpec{SecretRef: syncv1.LocalObjectReference{Name: "platform-push"}, Branch: "main", Path: "apps"},
			ApplicationConfigPaths: []string{".ksync.yaml", "teams/payments/.ksync.yaml"},
		},
	}
}

func validApplication(ns string) *syncv1.Application {
	prune := true
	return &syncv1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: ns},
		Spec: syncv1.ApplicationSpec{
			Source: syncv1.ApplicationSource{
				RepositoryRef: syncv1.LocalObjectReference{Name: "platform"},
				Path:          "envs/prod",
				Render: syncv1.Render{Type: syncv1.RenderHelm, Helm: &syncv1.HelmRender{
					Chart:       &syncv1.HelmChart{Repository: "oci://registry.example.com/charts", Name: "api", Version: "v1.4.2"},
					ValuesFiles: []string{"values.yaml"},
					ValuesFrom:  []syncv1.ValuesReference{{Kind: "Secret", Name: "api-values"}},
					Values:      &apiextensionsv1.JSON{Raw: []byte(`{"replicaCount":3}`)},
				}},
			},
			Destination:        syncv1.Destination{Namespace: ns},
			ServiceAccountName: "deployer",
			Sync:               syncv1.SyncPolicy{Automatic: false, Prune: &prune},
			Decryption:         &syncv1.Decryption{Provider: "sops", SecretRef: syncv1.LocalObjectReference{Name: "sops-age"}},
			History:            syncv1.HistoryPolicy{Limit: 5},
			Notifications: []syncv1.NotificationSubscription{{
				SinkRef: syncv1.LocalObjectReference{Name: "audit"},
				Events:  []syncv1.NotificationEvent{"AwaitingApproval", "Healthy", "Failed", "RolledBack"},
			}},
		},
	}
}

func validRevision(ns string) *syncv1.Revision {
	return &syncv1.Revision{
		ObjectMeta: metav1.ObjectMeta{Name: "api-0123456789", Namespace: ns},
		Spec: syncv1.RevisionSpec{
			ApplicationName: "api",
			DesiredState: syncv1.DesiredStateRef{
				SecretName: "api-0123456789",
				Digest:     "sha256:" + strings.Repeat("ab", 32),
				Objects:    3,
			},
			Source: &syncv1.RevisionSource{Commit: strings.Repeat("c", 40), Path: "apps/api", RenderedAt: metav1.Now()},
		},
	}
}

func validImagePolicy(ns string) *syncv1.ImagePolicy {
	return &syncv1.ImagePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: ns},
		Spec: syncv1.ImagePolicySpec{
			Image:     "registry.example.com/acme/api",
			SecretRef: &syncv1.LocalObjectReference{Name: "pull"},
			Interval:  &metav1.Duration{Duration: 5 * time.Minute},
			Policy:    syncv1.ImageSelectionPolicy{SemVer: &syncv1.SemVerPolicy{Range: ">=1.0.0 <2.0.0"}},
		},
	}
}

func validNotificationSink(ns string) *syncv1.NotificationSink {
	return &syncv1.NotificationSink{
		ObjectMeta: metav1.ObjectMeta{Name: "audit", Namespace: ns},
		Spec:       syncv1.NotificationSinkSpec{Type: syncv1.SinkWebhook, SecretRef: syncv1.LocalObjectReference{Name: "audit-webhook"}},
	}
}

func TestAPI_EveryKindIsAcceptedWithDefaults(t *testing.T) {
	ns := namespace(t)
	objs := []client.Object{validRepository(ns), validApplication(ns), validRevision(ns), validImagePolicy(ns), validNotificationSink(ns)}
	for _, o := range objs {
		if err := k8s.Create(t.Context(), o); err != nil {
			t.Fatalf("creating %T: %v", o, err)
		}
	}
	minimal := &syncv1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "minimal", Namespace: ns},
		Spec:       syncv1.ApplicationSpec{Source: syncv1.ApplicationSource{RepositoryRef: syncv1.LocalObjectReference{Name: "platform"}}},
	}
	if err := k8s.Create(t.Context(), minimal); err != nil {
		t.Fatal(err)
	}
	if minimal.Spec.Source.Render.Type != syncv1.RenderYAML || minimal.Spec.History.Limit != 10 ||
		minimal.Spec.Sync.Prune == nil || !*minimal.Spec.Sync.Prune {
		t.Errorf("defaults not applied: render %q, history %d, prune %v",
			minimal.Spec.Source.Render.Type, minimal.Spec.History.Limit, minimal.Spec.Sync.Prune)
	}
}

func TestAPI_RefusesBadSpecsNamingTheField(t *testing.T) {
	ns := namespace(t)
	cases := []struct {
		name  string
		obj   client.Object
		field string
		msg   string
	}{
		{"absolute source path", withApp(ns, func(a *syncv1.Application) { a.Spec.Source.Path = "/etc/prod" }),
			"spec.source.path", "must be a relative path"},
		{"source path with ..", withApp(ns, func(a *syncv1.Application) { a.Spec.Source.Path = "envs/../../secrets" }),
			"spec.source.path", "must not contain '..'"},
		{"source path with a NUL byte", withApp(ns, func(a *syncv1.Application) { a.Spec.Source.Path = "apps\x00" }),
			"spec.source.path", "must not contain control characters"},
		{"valuesFiles with a line break", withApp(ns, func(a *syncv1.Application) { a.Spec.Source.Render.Helm.ValuesFiles = []string{"values\n.yaml"} }),
			"spec.source.render.helm.valuesFiles[0]", "must not contain control characters"},
		{"applicationConfigPaths with an escape", withRepo(ns, func(r *syncv1.Repository) {
			r.Spec.ApplicationConfigPaths = []string{"\x1b[2J/.ksync.yaml"}
		}), "spec.applicationConfigPaths[0]", "must not contain control characters"},
		{"imageUpdate.path with a tab", withRepo(ns, func(r *syncv1.Repository) { r.Spec.ImageUpdate.Path = "apps\tprod" }),
			"spec.imageUpdate.path", "must not contain control characters"},
		{"valuesFiles with ..", withApp(ns, func(a *syncv1.Application) { a.Spec.Source.Render.Helm.ValuesFiles = []string{"../values.yaml"} }),
			"spec.source.render.helm.valuesFiles[0]", "must not contain '..'"},
		{"absolute valuesFiles", withApp(ns, func(a *syncv1.Application) { a.Spec.Source.Render.Helm.ValuesFiles = []string{"/values.yaml"} }),
			"spec.source.render.helm.valuesFiles[0]", "must be a relative path"},
		{"chart version range", withApp(ns, func(a *syncv1.Application) { a.Spec.Source.Render.Helm.Chart.Version = ">=1.0.0" }),
			"spec.source.render.helm.chart.version", "should match"},
		{"chart version wildcard", withApp(ns, func(a *syncv1.Application) { a.Spec.Source.Render.Helm.Chart.Version = "1.x" }),
			"spec.source.render.helm.chart.version", "should match"},
		{"chart repository over plain http", withApp(ns, func(a *syncv1.Application) {
			a.Spec.Source.Render.Helm.Chart.Repository = "http://charts.example.com"
		}), "spec.source.render.helm.chart", "must be an oci:// or https:// URL"},
		{"unknown render type", withApp(ns, func(a *syncv1.Application) {
			a.Spec.Source.Render = syncv1.Render{Type: "jsonnet"}
		}), "spec.source.render.type", `Unsupported value: "jsonnet"`},
		{"helm settings on a yaml render", withApp(ns, func(a *syncv1.Application) { a.Spec.Source.Render.Type = syncv1.RenderYAML }),
			"spec.source.render", "helm may only be set when type is helm"},
		{"history limit over the cap", withApp(ns, func(a *syncv1.Application) { a.Spec.History.Limit = 1000 }),
			"spec.history.limit", "should be less than or equal to 100"},
		{"unknown decryption provider", withApp(ns, func(a *syncv1.Application) { a.Spec.Decryption.Provider = "vault" }),
			"spec.decryption.provider", `Unsupported value: "vault"`},
		{"duplicate applicationConfigPaths", withRepo(ns, func(r *syncv1.Repository) {
			r.Spec.ApplicationConfigPaths = []string{"a/.ksync.yaml", "a/.ksync.yaml"}
		}), "spec.applicationConfigPaths[1]", "Duplicate value"},
		{"applicationConfigPaths listing one file as ./.ksync.yaml and .ksync.yaml", withRepo(ns, func(r *syncv1.Repository) {
			r.Spec.ApplicationConfigPaths = []string{"./.ksync.yaml", ".ksync.yaml"}
		}), "spec.applicationConfigPaths[0]", "must be a clean path"},
		{"applicationConfigPaths with a doubled slash", withRepo(ns, func(r *syncv1.Repository) {
			r.Spec.ApplicationConfigPaths = []string{"a/.ksync.yaml", "a//.ksync.yaml"}
		}), "spec.applicationConfigPaths[1]", "must be a clean path"},
		{"applicationConfigPaths not named .ksync.yaml", withRepo(ns, func(r *syncv1.Repository) {
			r.Spec.ApplicationConfigPaths = []string{"apps/ksync.yaml"}
		}), "spec.applicationConfigPaths[0]", "must name a file called .ksync.yaml"},
		{"absolute applicationConfigPaths", withRepo(ns, func(r *syncv1.Repository) {
			r.Spec.ApplicationConfigPaths = []string{"/.ksync.yaml"}
		}), "spec.applicationConfigPaths[0]", "must be a relative path"},
		{"applicationConfigPaths with ..", withRepo(ns, func(r *syncv1.Repository) {
			r.Spec.ApplicationConfigPaths = []string{"../other/.ksync.yaml"}
		}), "spec.applicationConfigPaths[0]", "must not contain '..'"},
		{"git URL without a scheme", withRepo(ns, func(r *syncv1.Repository) { r.Spec.Git.URL = "git.example.com/platform" }),
			"spec.git.url", "must be an https://, http:// or ssh:// URL"},
		{"image policy with two selections", withPolicy(ns, func(p *syncv1.ImagePolicy) {
			p.Spec.Policy.Digest = &syncv1.DigestPolicy{Tag: "main"}
		}), "spec.policy", "exactly one of semver, tagPattern or digest"},
		{"image with a tag", withPolicy(ns, func(p *syncv1.ImagePolicy) { p.Spec.Image = "registry.example.com/acme/api:1.0" }),
			"spec.image", "without tag or digest"},
		{"unknown sink type", withSink(ns, func(s *syncv1.NotificationSink) { s.Spec.Type = "email" }),
			"spec.type", `Unsupported value: "email"`},
		{"revision digest not sha256", withRevision(ns, func(r *syncv1.Revision) { r.Spec.DesiredState.Digest = "md5:abc" }),
			"spec.desiredState.digest", "should match"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := k8s.Create(t.Context(), tc.obj)
			if err == nil {
				t.Fatalf("created %s; want a refusal naming %s", tc.name, tc.field)
			}
			if !strings.Contains(err.Error(), tc.field+":") || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("refusal %q\ndoes not name field %q with %q", err, tc.field, tc.msg)
			}
		})
	}
}

func TestAPI_RevisionSpecIsImmutable(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*syncv1.Revision)
	}{
		{"the desired state", func(r *syncv1.Revision) { r.Spec.DesiredState.Objects = 4 }},
		{"the source commit", func(r *syncv1.Revision) { r.Spec.Source.Commit = strings.Repeat("d", 40) }},
		{"the render time", func(r *syncv1.Revision) {
			r.Spec.Source.RenderedAt = metav1.NewTime(r.Spec.Source.RenderedAt.Add(time.Hour))
		}},
		{"a render failure added", func(r *syncv1.Revision) {
			r.Spec.RenderFailure = &syncv1.RenderFailure{Reason: syncv1.ReasonRenderFailed, Message: "late"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rev := validRevision(namespace(t))
			if err := k8s.Create(t.Context(), rev); err != nil {
				t.Fatal(err)
			}
			tc.edit(rev)
			err := k8s.Update(t.Context(), rev)
			if err == nil || !strings.Contains(err.Error(), "spec: Invalid value") || !strings.Contains(err.Error(), "spec is immutable") {
				t.Fatalf("editing a Revision's spec: got %v, want spec is immutable", err)
			}
		})
	}
}

func TestAPI_StatusIsASubresource(t *testing.T) {
	ns := namespace(t)
	app := validApplication(ns)
	if err := k8s.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	app.Status.Phase = syncv1.PhaseHealthy
	if err := k8s.Update(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Get(t.Context(), client.ObjectKeyFromObject(app), app); err != nil {
		t.Fatal(err)
	}
	if app.Status.Phase != "" {
		t.Fatalf("a spec update wrote status.phase %q", app.Status.Phase)
	}
}

func withApp(ns string, f func(*syncv1.Application)) client.Object {
	a := validApplication(ns)
	a.GenerateName, a.Name = "bad-", ""
	f(a)
	return a
}

func withRepo(ns string, f func(*syncv1.Repository)) client.Object {
	r := validRepository(ns)
	r.GenerateName, r.Name = "bad-", ""
	f(r)
	return r
}

func withPolicy(ns string, f func(*syncv1.ImagePolicy)) client.Object {
	p := validImagePolicy(ns)
	p.GenerateName, p.Name = "bad-", ""
	f(p)
	return p
}

func withSink(ns string, f func(*syncv1.NotificationSink)) client.Object {
	s := validNotificationSink(ns)
	s.GenerateName, s.Name = "bad-", ""
	f(s)
	return s
}

func withRevision(ns string, f func(*syncv1.Revision)) client.Object {
	r := validRevision(ns)
	r.GenerateName, r.Name = "bad-", ""
	f(r)
	return r
}
