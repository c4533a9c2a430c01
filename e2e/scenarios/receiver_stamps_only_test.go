package scenarios_test

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
)

// TestE2E_ReceiverAccountMayOnlyStampAnnotations patches a Repository as
// the web service's ServiceAccount: RBAC grants patch, and the admission
// policy of deploy/rbac refuses every change but the request annotations
// (pull and merge request previews among them, not branch ones),
// while another ServiceAccount may still change anything.
func TestE2E_ReceiverAccountMayOnlyStampAnnotations(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-receiver-stamps")
	webhookRepository(t, ns, "platform", configMapApp("v1"))
	kubeconfig, err := env.Kubeconfig(t.Context(), manager.InstallName("web"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	web, err := client.New(cfg, client.Options{Scheme: manager.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		patch   string
		allowed bool
	}{
		{"spec", `{"spec":{"pollInterval":"30s"}}`, false},
		{"a label", `{"metadata":{"labels":{"team":"payments"}}}`, false},
		{"another annotation", `{"metadata":{"annotations":{"team":"payments"}}}`, false},
		{"a finalizer", `{"metadata":{"finalizers":["example.com/keep"]}}`, false},
		{"a branch preview request", `{"metadata":{"annotations":{"` + syncv1.PreviewRequestAnnotation(syncv1.BranchPreviewName("main")) + `":"{}"}}}`, false},
		{"reconcile-requested-at", `{"metadata":{"annotations":{"` + syncv1.ReconcileRequestedAtAnnotation + `":"now"}}}`, true},
		{"a pull request preview request", `{"metadata":{"annotations":{"` + syncv1.PreviewRequestAnnotation("pr-12") + `":"{}"}}}`, true},
		{"a pull request preview request removed", `{"metadata":{"annotations":{"` + syncv1.PreviewRequestAnnotation("pr-12") + `":null}}}`, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			repo := &syncv1.Repository{}
			repo.Namespace, repo.Name = ns, "platform"
			patch := func(opts ...client.PatchOption) error {
				return web.Patch(t.Context(), repo, client.RawPatch(types.MergePatchType, []byte(c.patch)),
					append(opts, client.FieldOwner(syncv1.FieldManagerWeb))...)
			}
			// The policy takes effect a moment after it is installed; dry
			// runs, which admission sees too, keep the Repository unchanged
			// until it does.
			if !c.allowed {
				eventually(t, time.Minute, "the policy to refuse "+c.name, func() bool { return patch(client.DryRunAll) != nil })
			}
			err := patch()
			if c.allowed && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !c.allowed && (err == nil || !strings.Contains(err.Error(), "kuvryn-sync-web-stamps-only")) {
				t.Fatalf("not refused by the policy: %v", err)
			}
		})
	}
	// Now that the policy refuses, another ServiceAccount allowed to patch
	// Repositories is still not held to it.
	other := rest.CopyConfig(env.CP.Config)
	other.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":deployer", Groups: []string{"system:masters"}}
	deployer, err := client.New(other, client.Options{Scheme: manager.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	repo := &syncv1.Repository{}
	repo.Namespace, repo.Name = ns, "platform"
	if err := deployer.Patch(t.Context(), repo, client.RawPatch(types.MergePatchType,
		[]byte(`{"spec":{"pollInterval":"2h"},"metadata":{"labels":{"team":"platform"}}}`))); err != nil {
		t.Fatalf("another ServiceAccount's patch: %v", err)
	}
}
