package scenarios_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestE2E_SelfHealRevertsKubectlEdits edits, as an operator would, the
// objects of an automatic Application with the kubectl binary: each edit is
// rolled back, a DriftCorrected Event names the object and the field manager
// kubectl wrote under (kubectl scale's is plain "kubectl"), and the
// Application is Synced again.
func TestE2E_SelfHealRevertsKubectlEdits(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-selfheal")
	repository(t, ns, "platform", map[string]string{
		".ksync.yaml": `metadata: {name: shop}
spec:
  source: {path: deploy}
  serviceAccountName: deployer
  sync: {automatic: true}
`,
		"deploy/settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {color: blue}\n",
		"deploy/web.yaml":      deployment("web", "web:1.0"),
	})
	waitHealthy(t, ns, "shop", "")
	applied := filepath.Join(t.TempDir(), "settings.yaml")
	if err := os.WriteFile(applied, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: "+ns+
		"}\ndata: {color: green, extra: by-hand}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	settingsHealed := func(cm *corev1.ConfigMap) bool {
		_, extra := cm.Data["extra"]
		_, label := cm.Labels["tier"]
		_, note := cm.Annotations["note"]
		_, lastApplied := cm.Annotations["kubectl.kubernetes.io/last-applied-configuration"]
		return cm.Data["color"] == "blue" && !extra && !label && !note && !lastApplied
	}
	webHealed := func(d *appsv1.Deployment) bool {
		return d.Spec.Replicas != nil && *d.Spec.Replicas == 1 && d.Spec.Template.Spec.Containers[0].Image == "web:1.0"
	}

	for _, tc := range []struct {
		name    string
		args    []string
		object  string
		manager string
	}{
		{"patch", []string{"patch", "configmap", "settings", "--type=merge", "-p", `{"data":{"color":"red"}}`}, "ConfigMap " + ns + "/settings", "kubectl-patch"},
		{"label", []string{"label", "configmap", "settings", "tier=db", "--overwrite"}, "ConfigMap " + ns + "/settings", "kubectl-label"},
		{"annotate", []string{"annotate", "configmap", "settings", "note=hot-fix"}, "ConfigMap " + ns + "/settings", "kubectl-annotate"},
		{"scale", []string{"scale", "deployment", "web", "--replicas=3"}, "Deployment.apps " + ns + "/web", "kubectl"},
		{"set image", []string{"set", "image", "deployment/web", "web=web:6.6.6"}, "Deployment.apps " + ns + "/web", "kubectl-set"},
		{"client-side apply", []string{"apply", "-f", applied}, "ConfigMap " + ns + "/settings", "kubectl-client-side-apply"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			since := time.Now().Add(-time.Second)
			kubectl(t, append([]string{"-n", ns}, tc.args...)...)
			eventually(t, 2*time.Minute, "the "+tc.name+" edit rolled back", func() bool {
				var cm corev1.ConfigMap
				var d appsv1.Deployment
				return env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "settings"}, &cm) == nil &&
					env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "web"}, &d) == nil &&
					settingsHealed(&cm) && webHealed(&d)
			})
			eventually(t, time.Minute, "a DriftCorrected Event naming "+tc.object+" and field manager "+tc.manager, func() bool {
				var events corev1.EventList
				if err := env.Client.List(t.Context(), &events, client.InNamespace(ns)); err != nil {
					return false
				}
				for _, ev := range events.Items {
					if ev.Reason == syncv1.ReasonDriftCorrected && !ev.CreationTimestamp.Time.Before(since.Truncate(time.Second)) &&
						strings.Contains(ev.Message, tc.object) && strings.Contains(ev.Message, `"`+tc.manager+`"`) {
						return true
					}
				}
				return false
			})
			eventually(t, time.Minute, "Application shop Synced and Healthy again, its newest attempt recording the correction", func() bool {
				var app syncv1.Application
				return env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "shop"}, &app) == nil &&
					app.Status.Sync == syncv1.SyncStateSynced && app.Status.Health == syncv1.HealthHealthy &&
					len(app.Status.History) > 0 && strings.Contains(app.Status.History[0].Drift, tc.object) &&
					strings.Contains(app.Status.History[0].Drift, `"`+tc.manager+`"`)
			})
		})
	}
}

// kubectl runs the kubectl that tools/controlplane/build.sh builds into
// bin/, as the control plane's admin, and fails the test if it fails.
func kubectl(t *testing.T, args ...string) {
	t.Helper()
	bin := filepath.Join(env.Root, "bin", "kubectl")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%v: build it with tools/controlplane/build.sh", err)
	}
	if out, errOut, err := runBin(t, "kubectl", env.CP.Kubeconfig, args...); err != nil {
		t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
	}
}
