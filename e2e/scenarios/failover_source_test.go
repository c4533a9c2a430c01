package scenarios_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/e2e/harness"
)

// TestE2E_SourceControllerLeaderKilledMidRenderStandbyRendersOnce: two
// source-controller replicas elect a leader; the leader is SIGKILLed while
// it renders a Helm Application, its chart download held open by the
// chart repository. The standby takes the lease within the lease duration,
// renders the same Application once, and the rollout completes: one
// Revision and one desired-state Secret.
func TestE2E_SourceControllerLeaderKilledMidRenderStandbyRendersOnce(t *testing.T) {
	archive, err := harness.PackageChart(map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: failover\nversion: 1.0.0\ntype: application\n",
		"templates/configmap.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: {{ .Release.Name }}-settings}
data: {chart: {{ .Chart.Name | quote }}}
`,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Charts.Publish(archive); err != nil {
		t.Fatal(err)
	}
	ns := namespace(t, "e2e-failover-source")
	leader := sourceController
	waitLogged(t, leader, acquired)
	hold := env.Charts.HoldArchives()
	defer hold.Release()
	standby := startStandby(t, "source-controller",
		append(harness.LeaderFlags(), "--source-cache-dir="+filepath.Join(env.Dir, "cache-standby"))...)

	repository(t, ns, "platform", map[string]string{
		".ksync.yaml": `metadata: {name: settings}
spec:
  source:
    render:
      type: helm
      helm:
        chart: {repository: "` + env.Charts.HelmRepository() + `", name: failover, version: 1.0.0, insecure: true}
  serviceAccountName: deployer
  sync: {automatic: true}
`,
	})
	select {
	case <-hold.Arrived():
	case <-time.After(3 * time.Minute):
		t.Fatal("the leader never downloaded the chart")
	}
	if revs := revisionsOf(t, ns, "settings"); len(revs) != 0 {
		t.Fatalf("Revisions %v exist while the chart download is held: not mid-render", revs)
	}

	took := killLeader(t, "source-controller", leader, standby)
	t.Logf("the standby source-controller leads %s after the leader's SIGKILL (lease %s)", took.Round(100*time.Millisecond), harness.LeaseDuration)
	sourceController = standby
	eventually(t, 2*time.Minute, "the standby to download the chart again", func() bool { return hold.Requests() >= 2 })
	hold.Release()

	healthy := waitHealthy(t, ns, "settings", "")
	if revs := revisionsOf(t, ns, "settings"); len(revs) != 1 || revs[0] != healthy {
		t.Errorf("Revisions of settings %v, want the one deployed, %s", revs, healthy)
	}
	var secrets corev1.SecretList
	if err := env.Client.List(t.Context(), &secrets, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var desired []string
	for _, s := range secrets.Items {
		if s.Type == corev1.SecretType(syncv1.DesiredStateSecretType) {
			desired = append(desired, s.Name)
		}
	}
	if len(desired) != 1 {
		t.Errorf("desired-state Secrets %v, want one for the one render", desired)
	}
	get(t, &corev1.ConfigMap{}, ns, "settings-settings")
}

// revisionsOf lists the names of the Application's Revisions.
func revisionsOf(t *testing.T, ns, app string) []string {
	t.Helper()
	var revs syncv1.RevisionList
	if err := env.Client.List(t.Context(), &revs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range revs.Items {
		if strings.HasPrefix(r.Name, app+"-") {
			names = append(names, r.Name)
		}
	}
	return names
}
