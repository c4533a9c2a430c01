package scenarios_test

import (
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestE2E_DiscoveredApplicationRendersFromGit proves, with the
// source-controller running as its own process under its own RBAC, that a
// .ksync.yaml in Git becomes an Application and its Kustomize overlay a
// Revision.
func TestE2E_DiscoveredApplicationRendersFromGit(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-discovery")
	repository(t, ns, "platform", map[string]string{
		".ksync.yaml": `metadata: {name: web}
spec:
  source: {path: overlays/prod, render: {type: kustomize}}
  serviceAccountName: deployer
  sync: {automatic: true}
`,
		"base/kustomization.yaml":          "resources: [configmap.yaml]\n",
		"base/configmap.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {tier: base}\n",
		"overlays/prod/kustomization.yaml": "resources: [../../base]\nnamePrefix: prod-\n",
	})
	eventually(t, 2*time.Minute, "Application web with a desired Revision", func() bool {
		app := &syncv1.Application{}
		err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "web"}, app)
		return err == nil && app.Status.DesiredRevision != ""
	})
	app := get(t, &syncv1.Application{}, ns, "web")
	rev := get(t, &syncv1.Revision{}, ns, app.Status.DesiredRevision)
	if rev.Spec.DesiredState.Objects != 1 || rev.Spec.Source == nil {
		t.Fatalf("Revision %s: %d objects, source %+v", rev.Name, rev.Spec.DesiredState.Objects, rev.Spec.Source)
	}
	if app.Labels[syncv1.RepositoryLabel] != "platform" {
		t.Fatalf("labels %v", app.Labels)
	}
}
