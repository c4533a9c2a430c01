package preview

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/desiredstate"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/pkg/ssa"
)

// previewName and commit are the preview every test Revision plans.
const (
	previewName = "pr-12"
	commit      = "0123456789abcdef0123456789abcdef01234567"
)

// env is one test's namespace and its service accounts.
type env struct {
	t  *testing.T
	ns string
}

// newEnv creates a namespace with service account "deployer", which may do
// anything to the kinds the tests plan there, and starts the preview
// controller over it.
func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "preview-"}}
	must(t, admin.Create(ctx, ns))
	t.Cleanup(func() { _ = admin.Delete(context.Background(), ns) })
	e := &env{t: t, ns: ns.Name}
	e.serviceAccount("deployer", rbacv1.PolicyRule{
		APIGroups: []string{"", "apps", "batch"}, Resources: []string{"configmaps", "secrets", "deployments", "jobs"}, Verbs: []string{"*"},
	})
	e.start()
	return e
}

// serviceAccount creates a service account bound to a Role of rules.
func (e *env) serviceAccount(name string, rules ...rbacv1.PolicyRule) {
	e.t.Helper()
	ctx := e.t.Context()
	must(e.t, admin.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name}}))
	must(e.t, admin.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name}, Rules: rules}))
	must(e.t, admin.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: e.ns, Name: name}},
	}))
}

// start runs a manager with the preview controller until the test ends.
func (e *env) start() {
	e.t.Helper()
	mgr, err := ctrl.NewManager(cp.Config, ctrl.Options{
		Scheme:                 manager.Scheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{e.ns: {}}},
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	must(e.t, err)
	must(e.t, New(mgr, "", nil).SetupWithManager(mgr))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	e.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			e.t.Errorf("manager stopped with: %v", err)
		}
	})
}

// application creates a manual Application applying as serviceAccount.
func (e *env) application(name, serviceAccount string) *syncv1.Application {
	e.t.Helper()
	app := &syncv1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Spec: syncv1.ApplicationSpec{
			Source:             syncv1.ApplicationSource{RepositoryRef: syncv1.LocalObjectReference{Name: "platform"}},
			ServiceAccountName: serviceAccount,
		},
	}
	must(e.t, admin.Create(e.t.Context(), app))
	return app
}

// deploy does what a completed rollout of objs leaves behind: the objects
// applied by field manager kuvryn-sync and claimed by app, and a deployed
// Revision whose inventory lists them.
func (e *env) deploy(app string, objs ...*unstructured.Unstructured) {
	e.t.Helper()
	ctx := e.t.Context()
	var inventory []string
	for _, obj := range objs {
		obj = obj.DeepCopy()
		obj.SetNamespace(e.ns)
		obj.SetAnnotations(map[string]string{syncv1.OwnedByAnnotation: e.ns + "/" + app})
		must(e.t, admin.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(syncv1.FieldManagerSync), client.ForceOwnership))
		gvk := obj.GroupVersionKind()
		inventory = append(inventory, syncv1.InventoryEntry(syncv1.ObjectRef{
			Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: e.ns, Name: obj.GetName(),
		}))
	}
	rev := &syncv1.Revision{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: app + "-deployed", Labels: map[string]string{syncv1.ApplicationLabel: app}},
		Spec: syncv1.RevisionSpec{ApplicationName: app, DesiredState: syncv1.DesiredStateRef{
			SecretName: app + "-deployed", Digest: "sha256:" + strings.Repeat("d", 64), Objects: int32(len(objs)),
		}},
	}
	must(e.t, admin.Create(ctx, rev))
	must(e.t, ssa.ApplyStatus(ctx, admin, rev, syncv1.FieldManagerSync, map[string]any{
		"phase": syncv1.PhaseHealthy, "inventory": map[string]any{"entries": inventory},
	}))
	must(e.t, ssa.ApplyStatus(ctx, admin, &syncv1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: app}},
		syncv1.FieldManagerSync, map[string]any{"deployedRevision": rev.Name}))
}

// preview does what the source-controller does for a preview of app that
// renders objs: a preview Revision and its desired-state Secret.
func (e *env) preview(app string, newApp *syncv1.PreviewApplication, objs ...*unstructured.Unstructured) string {
	e.t.Helper()
	ctx := e.t.Context()
	data, digest, err := desiredstate.Encode(objs)
	must(e.t, err)
	name := desiredstate.PreviewRevisionName(app, previewName, digest, commit)
	rev := e.createPreviewRevision(app, name, newApp, syncv1.DesiredStateRef{SecretName: name, Digest: digest, Objects: int32(len(objs))})
	must(e.t, admin.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: e.ns, Name: name, Labels: previewLabels(app),
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: syncv1.GroupVersion.String(), Kind: "Revision", Name: rev.Name, UID: rev.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Type: syncv1.DesiredStateSecretType,
		Data: map[string][]byte{desiredstate.DataKey: data},
	}))
	return name
}

// previewRenderFailure does what the source-controller does when a
// preview's commit fails to render: a preview Revision without a desired
// state whose spec.renderFailure says why, and no status.
func (e *env) previewRenderFailure(app, reason, message string) string {
	e.t.Helper()
	name := app + "-" + previewName + "-f00dfeed00"
	e.createPreviewRevisionWith(app, name, func(spec *syncv1.RevisionSpec) {
		spec.Source = &syncv1.RevisionSource{Commit: commit, RenderedAt: metav1.Now()}
		spec.RenderFailure = &syncv1.RenderFailure{Reason: reason, Message: message}
	})
	return name
}

func (e *env) createPreviewRevision(app, name string, newApp *syncv1.PreviewApplication, ds syncv1.DesiredStateRef) *syncv1.Revision {
	e.t.Helper()
	return e.createPreviewRevisionWith(app, name, func(spec *syncv1.RevisionSpec) {
		spec.DesiredState = ds
		spec.Preview.NewApplication = newApp
	})
}

// createPreviewRevisionWith creates a preview Revision of app whose spec
// mutate completes.
func (e *env) createPreviewRevisionWith(app, name string, mutate func(*syncv1.RevisionSpec)) *syncv1.Revision {
	e.t.Helper()
	rev := &syncv1.Revision{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name, Labels: previewLabels(app)},
		Spec: syncv1.RevisionSpec{
			ApplicationName: app,
			Preview:         &syncv1.RevisionPreview{Name: previewName, Repository: "platform", Ref: "refs/pull/12/head", Commit: commit},
		},
	}
	mutate(&rev.Spec)
	must(e.t, admin.Create(e.t.Context(), rev))
	return rev
}

func previewLabels(app string) map[string]string {
	return map[string]string{syncv1.PreviewLabel: previewName, syncv1.RepositoryLabel: "platform", syncv1.ApplicationLabel: app}
}

// waitForResult waits for the preview Revision's plan result: its Planned
// condition True or False.
func (e *env) waitForResult(name string) *syncv1.Revision {
	e.t.Helper()
	rev := &syncv1.Revision{}
	deadline := time.Now().Add(timeout)
	for {
		must(e.t, admin.Get(e.t.Context(), types.NamespacedName{Namespace: e.ns, Name: name}, rev))
		if c := meta.FindStatusCondition(rev.Status.Conditions, syncv1.ConditionPlanned); c != nil && c.Status != metav1.ConditionUnknown {
			return rev
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out after %s waiting for the plan of preview Revision %s; status %+v", timeout, name, rev.Status)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// live reads an object as it is stored; nil when it does not exist.
func (e *env) live(apiVersion, kind, name string) *unstructured.Unstructured {
	e.t.Helper()
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion(apiVersion)
	obj.SetKind(kind)
	err := admin.Get(e.t.Context(), types.NamespacedName{Namespace: e.ns, Name: name}, obj)
	if client.IgnoreNotFound(err) != nil {
		e.t.Fatal(err)
	}
	if err != nil {
		return nil
	}
	return obj
}

func object(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	must(t, yaml.Unmarshal([]byte(manifest), &obj.Object))
	return obj
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}
