package scenarios_test

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/controlplane"
)

// TestE2E_SyncControllerKilledMidRolloutResumesWithoutRerunningHooks: the
// sync-controller is killed with SIGKILL while a rollout waits for its
// wave's Deployment, after the pre-sync hook succeeded; restarted with the
// same flags, it completes the same attempt and runs neither hook twice.
func TestE2E_SyncControllerKilledMidRolloutResumesWithoutRerunningHooks(t *testing.T) {
	ns := namespace(t, "e2e-restart")
	gate := "gate.e2e.kuvryn.io/" + ns
	repository(t, ns, "platform", map[string]string{
		".ksync.yaml":      shopApplication,
		"app/migrate.yaml": hookJob("migrate", "pre-sync"),
		"app/smoke.yaml":   hookJob("smoke", "post-sync"),
		// The Deployment's Pods cannot schedule until the test labels the
		// nodes, so the rollout waits in its wave for as long as needed.
		"app/web.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeSelector: {"` + gate + `": open}
      containers: [{name: web, image: "web:1.0"}]
`,
	})

	var app syncv1.Application
	var rev syncv1.Revision
	eventually(t, 3*time.Minute, "pre-sync hook Succeeded and the wave Applying", func() bool {
		if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "shop"}, &app); err != nil || app.Status.DesiredRevision == "" {
			return false
		}
		if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: app.Status.DesiredRevision}, &rev); err != nil {
			return false
		}
		return hookState(&rev, "migrate") == syncv1.HookSucceeded &&
			len(rev.Status.Waves) == 1 && rev.Status.Waves[0].State == syncv1.WaveApplying
	})
	migrate := get(t, &batchv1.Job{}, ns, "migrate")

	syncController.Kill()
	restarted, err := env.Restart(t.Context(), syncController)
	if err != nil {
		t.Fatal(err)
	}
	syncController = restarted
	// Later tests update Applications, which the webhook must admit again.
	if err := controlplane.WaitForWebhooks(t.Context(), env.Client, "default", 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	openGate(t, gate)

	healthy := waitHealthy(t, ns, "shop", "")
	if healthy != rev.Name {
		t.Fatalf("deployed %s, want the Revision %s that was rolling out", healthy, rev.Name)
	}
	rev = *get(t, &syncv1.Revision{}, ns, rev.Name)
	if rev.Status.Attempt != 1 {
		t.Errorf("attempt %d, want the restarted controller to finish attempt 1", rev.Status.Attempt)
	}
	if after := get(t, &batchv1.Job{}, ns, "migrate"); after.UID != migrate.UID {
		t.Errorf("pre-sync hook Job migrate was run again: UID %s, before the kill %s", after.UID, migrate.UID)
	}
	if got := hookState(&rev, "smoke"); got != syncv1.HookSucceeded {
		t.Errorf("post-sync hook smoke is %q, want Succeeded", got)
	}
	var jobs batchv1.JobList
	if err := env.Client.List(t.Context(), &jobs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) != 2 {
		t.Errorf("%d Jobs in %s, want one per hook", len(jobs.Items), ns)
	}
}

// shopApplication declares the Application shop, rendered from app/ and
// rolled out automatically as the deployer ServiceAccount.
const shopApplication = `metadata: {name: shop}
spec:
  source: {path: app}
  serviceAccountName: deployer
  sync: {automatic: true}
`

func hookJob(name, stage string) string {
	return `apiVersion: batch/v1
kind: Job
metadata:
  name: ` + name + `
  annotations: {sync.kuvryn.io/hook: ` + stage + `}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: ` + name + `, image: "` + name + `:1"}]
`
}

func hookState(rev *syncv1.Revision, name string) syncv1.HookState {
	if rev.Status.Hooks == nil {
		return ""
	}
	for _, h := range rev.Status.Hooks.Items {
		if h.ObjectRef.Name == name {
			return h.State
		}
	}
	return ""
}

// openGate labels every node so that Pods selecting gate can schedule.
func openGate(t *testing.T, gate string) {
	t.Helper()
	var nodes corev1.NodeList
	if err := env.Client.List(t.Context(), &nodes); err != nil {
		t.Fatal(err)
	}
	for i := range nodes.Items {
		node := &nodes.Items[i]
		patch := client.MergeFrom(node.DeepCopy())
		node.Labels[gate] = "open"
		if err := env.Client.Patch(t.Context(), node, patch); err != nil {
			t.Fatal(err)
		}
	}
}
