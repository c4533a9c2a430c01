package scenarios_test

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestE2E_KustomizeOverlayDeployedHealthyAndPushRollsOut runs the vertical
// slice with every service its own process: a Kustomize overlay in Git is
// rendered, planned, applied as the Application's service account and
// becomes Healthy; a push produces a new Revision and a new rollout.
func TestE2E_KustomizeOverlayDeployedHealthyAndPushRollsOut(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-rollout")
	gitRepo := repository(t, ns, "platform", map[string]string{
		".ksync.yaml": `metadata: {name: web}
spec:
  source: {path: overlays/prod, render: {type: kustomize}}
  serviceAccountName: deployer
  sync: {automatic: true}
`,
		"base/kustomization.yaml":          "resources: [deployment.yaml]\n",
		"base/deployment.yaml":             deployment("web", "web:1.0"),
		"overlays/prod/kustomization.yaml": "resources: [../../base]\nreplicas: [{name: web, count: 2}]\n",
	})
	first := waitHealthy(t, ns, "web", "")
	d := get(t, &appsv1.Deployment{}, ns, "web")
	if *d.Spec.Replicas != 2 || d.Status.ReadyReplicas != 2 {
		t.Fatalf("Deployment web: %d replicas, %d ready", *d.Spec.Replicas, d.Status.ReadyReplicas)
	}

	if _, err := gitRepo.Commit(map[string]string{"base/deployment.yaml": deployment("web", "web:1.1")}, "web 1.1"); err != nil {
		t.Fatal(err)
	}
	second := waitHealthy(t, ns, "web", first)
	if second == first {
		t.Fatal("the push did not produce a new Revision")
	}
	d = get(t, &appsv1.Deployment{}, ns, "web")
	if img := d.Spec.Template.Spec.Containers[0].Image; img != "web:1.1" {
		t.Fatalf("Deployment web runs %s after the push, want web:1.1", img)
	}
}

// waitHealthy waits until the Application deployed a Revision other than
// previous and is Synced and Healthy, and returns that Revision.
func waitHealthy(t *testing.T, ns, name, previous string) string {
	t.Helper()
	var app syncv1.Application
	eventually(t, 3*time.Minute, "Application "+name+" Synced and Healthy on a new Revision", func() bool {
		if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &app); err != nil {
			return false
		}
		return app.Status.DeployedRevision != "" && app.Status.DeployedRevision != previous &&
			app.Status.DeployedRevision == app.Status.DesiredRevision &&
			app.Status.Sync == syncv1.SyncStateSynced && app.Status.Health == syncv1.HealthHealthy
	})
	rev := get(t, &syncv1.Revision{}, ns, app.Status.DeployedRevision)
	if !meta.IsStatusConditionTrue(rev.Status.Conditions, syncv1.ConditionRolloutComplete) {
		t.Fatalf("Revision %s deployed without RolloutComplete", rev.Name)
	}
	return rev.Name
}

func deployment(name, image string) string {
	return `apiVersion: apps/v1
kind: Deployment
metadata: {name: ` + name + `}
spec:
  replicas: 1
  selector: {matchLabels: {app: ` + name + `}}
  template:
    metadata: {labels: {app: ` + name + `}}
    spec:
      containers: [{name: ` + name + `, image: "` + image + `"}]
`
}
