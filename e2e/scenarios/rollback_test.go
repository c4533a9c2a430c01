package scenarios_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestE2E_KsyncRollbackRestoresTheLastKnownGoodState: after a bad push,
// `ksync rollback` restores the previous known-good Revision and the bad
// one stays held although Git still renders it.
func TestE2E_KsyncRollbackRestoresTheLastKnownGoodState(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-rollback")
	gitRepo := repository(t, ns, "platform", map[string]string{
		".ksync.yaml": `metadata: {name: web}
spec:
  source: {path: app}
  serviceAccountName: deployer
  sync: {automatic: true}
`,
		"app/settings.yaml": settingsYAML("blue"),
	})
	good := waitHealthy(t, ns, "web", "")
	if _, err := gitRepo.Commit(map[string]string{"app/settings.yaml": settingsYAML("red")}, "red"); err != nil {
		t.Fatal(err)
	}
	bad := waitHealthy(t, ns, "web", good)

	kubeconfig := userKubeconfig(t, "dave", ns)
	out, errOut, err := ksync(t, kubeconfig, "rollback", "web", "-n", ns, "--yes")
	if err != nil {
		t.Fatalf("ksync rollback: %v\n%s%s", err, out, errOut)
	}
	if !strings.Contains(out, good) {
		t.Errorf("ksync rollback did not name the target %s:\n%s", good, out)
	}
	var app syncv1.Application
	eventually(t, 3*time.Minute, "the rollback deployed", func() bool {
		err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "web"}, &app)
		return err == nil && app.Status.DeployedRevision == good && settingsColor(t, ns) == "blue"
	})
	if app.Status.HeldRevision != bad || app.Annotations[syncv1.RollbackRequestedByAnnotation] != "dave" {
		t.Fatalf("heldRevision %q (want %s), requested by %q (want dave)", app.Status.HeldRevision, bad,
			app.Annotations[syncv1.RollbackRequestedByAnnotation])
	}
	time.Sleep(5 * time.Second)
	if get(t, &syncv1.Application{}, ns, "web").Status.DeployedRevision != good || settingsColor(t, ns) != "blue" {
		t.Fatal("the held Revision was applied again")
	}
}

func settingsYAML(color string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {color: " + color + "}\n"
}

func settingsColor(t *testing.T, ns string) string {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "settings"}, cm); err != nil {
		return ""
	}
	return cm.Data["color"]
}
