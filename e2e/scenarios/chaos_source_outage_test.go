package scenarios_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/e2e/harness"
	testgit "github.com/kuvryn/kuvryn-sync/pkg/testkit/git"
)

const (
	// chaosOutageEnv is how long the Git server and the chart servers stay
	// down; CI runs 30s, make e2e-chaos a minute.
	chaosOutageEnv     = "KUVRYN_CHAOS_OUTAGE"
	chaosOutageDefault = 30 * time.Second
	// outageRecovery bounds the wait for the new revisions after the
	// servers are back: the backoff's longest wait within a minute's
	// outage is 40s, far below the hour's pollInterval.
	outageRecovery = 2 * time.Minute
)

// TestE2E_Chaos_GitServerAndChartServersDownRecoverBeforeThePollInterval
// takes a Git server down (connection refused) and an OCI registry and a
// Helm repository down (503), servers of its own, for KUVRYN_CHAOS_OUTAGE,
// with Repositories polling every hour. A commit pushed just before, and asked for with a
// reconcile request, cannot be fetched or its new chart version pulled;
// conditions say when they are retried. Once the servers are back, the new
// revisions are deployed within two minutes, long before the next poll.
func TestE2E_Chaos_GitServerAndChartServersDownRecoverBeforeThePollInterval(t *testing.T) {
	outage := chaosOutageDefault
	if v := os.Getenv(chaosOutageEnv); v != "" {
		var err error
		if outage, err = time.ParseDuration(v); err != nil || outage <= 0 {
			t.Fatalf("%s=%q: want a positive duration such as 60s", chaosOutageEnv, v)
		}
	}
	t.Parallel()
	ns := namespace(t, "e2e-chaos-outage")
	// Servers of its own, taken down without disturbing the scenarios that
	// run beside it.
	gitServer, err := testgit.NewServer(testgit.Options{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gitServer.Close() })
	chartServers, err := harness.StartChartServers()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(chartServers.Close)
	for _, version := range []string{"1.0.0", "1.1.0"} {
		if _, err := chartServers.Publish(outageChart(t, version)); err != nil {
			t.Fatal(err)
		}
	}
	plain := repositoryOn(t, gitServer, ns, "plain", map[string]string{
		".ksync.yaml":       "metadata: {name: web}\nspec: {source: {path: app}, serviceAccountName: deployer, sync: {automatic: true}}\n",
		"app/settings.yaml": outageSettings("blue"),
	}, time.Hour)
	charts := repositoryOn(t, gitServer, ns, "charts", map[string]string{".ksync.yaml": outageChartApplications(chartServers, "1.0.0")}, time.Hour)
	apps := []string{"web", "oci", "http"}
	for _, app := range apps {
		waitHealthy(t, ns, app, "")
	}

	// The chart servers go down first: the Git server must still serve the
	// commit that moves to a chart version not pulled yet.
	chartsDown := time.Now()
	chartServers.SetUnavailable(true)
	chartCommit, err := charts.Commit(map[string]string{".ksync.yaml": outageChartApplications(chartServers, "1.1.0")}, "chart 1.1.0")
	if err != nil {
		t.Fatal(err)
	}
	requestReconcile(t, ns, "charts")
	eventually(t, time.Minute, "Repository charts fetched "+chartCommit, func() bool {
		a := get(t, &syncv1.Repository{}, ns, "charts").Status.Artifact
		return a != nil && a.Commit == chartCommit
	})
	plainCommit, err := plain.Commit(map[string]string{"app/settings.yaml": outageSettings("green")}, "green")
	if err != nil {
		t.Fatal(err)
	}
	gitDown := time.Now()
	if err := gitServer.Stop(); err != nil {
		t.Fatal(err)
	}
	requestReconcile(t, ns, "plain")

	retrying := map[string]string{}
	watch := func() {
		if m := retryingMessage(get(t, &syncv1.Repository{}, ns, "plain").Status.Conditions, syncv1.ConditionFetched); m != "" {
			retrying["Repository plain "+syncv1.ConditionFetched] = m
		}
		for _, app := range []string{"oci", "http"} {
			if m := retryingMessage(get(t, &syncv1.Application{}, ns, app).Status.Conditions, syncv1.ConditionRendered); m != "" {
				retrying["Application "+app+" "+syncv1.ConditionRendered] = m
			}
		}
	}
	for time.Since(gitDown) < outage {
		watch()
		time.Sleep(500 * time.Millisecond)
	}
	if err := gitServer.Start(); err != nil {
		t.Fatal(err)
	}
	chartServers.SetUnavailable(false)
	back := time.Now()
	t.Logf("Git server down %s, chart servers down %s", back.Sub(gitDown).Round(time.Second), back.Sub(chartsDown).Round(time.Second))
	for _, what := range []string{"Repository plain Fetched", "Application oci Rendered", "Application http Rendered"} {
		if retrying[what] == "" {
			t.Errorf("during the outage, %s never said when it is retried", what)
		} else {
			t.Logf("during the outage, %s: %q", what, retrying[what])
		}
	}

	want := map[string]func(*syncv1.Revision) bool{
		"web": func(r *syncv1.Revision) bool { return r.Spec.Source != nil && r.Spec.Source.Commit == plainCommit },
		"oci": func(r *syncv1.Revision) bool {
			return r.Spec.Source != nil && r.Spec.Source.Chart != nil && r.Spec.Source.Chart.Version == "1.1.0"
		},
	}
	want["http"] = want["oci"]
	for _, app := range apps {
		var rev syncv1.Revision
		eventually(t, outageRecovery, "Application "+app+" deployed the revision pushed before the outage", func() bool {
			a := get(t, &syncv1.Application{}, ns, app)
			if a.Status.DeployedRevision == "" || a.Status.DeployedRevision != a.Status.DesiredRevision ||
				a.Status.Sync != syncv1.SyncStateSynced || a.Status.Health != syncv1.HealthHealthy {
				return false
			}
			return env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: a.Status.DeployedRevision}, &rev) == nil && want[app](&rev)
		})
		if !meta.IsStatusConditionTrue(rev.Status.Conditions, syncv1.ConditionRolloutComplete) {
			t.Errorf("Application %s: Revision %s deployed without RolloutComplete", app, rev.Name)
		}
		t.Logf("Application %s deployed %s %s after the servers came back", app, rev.Name, time.Since(back).Round(time.Second))
	}
	if got := get(t, &corev1.ConfigMap{}, ns, "settings").Data["color"]; got != "green" {
		t.Errorf("ConfigMap settings color %q, want green from the commit pushed before the outage", got)
	}
	for _, app := range []string{"oci", "http"} {
		if got := get(t, &corev1.ConfigMap{}, ns, app+"-outage").Data["chartVersion"]; got != "1.1.0" {
			t.Errorf("ConfigMap %s-outage chartVersion %q, want 1.1.0", app, got)
		}
	}
	requireServicesRunning(t)
}

// requestReconcile sets the Repository's reconcile request annotation, as
// `ksync reconcile` and the receiver do.
func requestReconcile(t *testing.T, ns, name string) {
	t.Helper()
	repo := get(t, &syncv1.Repository{}, ns, name)
	patch := client.MergeFrom(repo.DeepCopy())
	if repo.Annotations == nil {
		repo.Annotations = map[string]string{}
	}
	repo.Annotations[syncv1.ReconcileRequestedAtAnnotation] = time.Now().UTC().Format(time.RFC3339Nano)
	if err := env.Client.Patch(t.Context(), repo, patch); err != nil {
		t.Fatal(err)
	}
}

// retryingMessage is the message of condition typ when it is False and
// says when it is retried.
func retryingMessage(conditions []metav1.Condition, typ string) string {
	c := meta.FindStatusCondition(conditions, typ)
	if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "retrying in ") {
		return ""
	}
	return c.Message
}

func outageSettings(color string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {color: " + color + "}\n"
}

// outageChartApplications declares the Applications oci and http rendering
// the chart outage at version from the OCI registry and the Helm repository
// of servers.
func outageChartApplications(servers *harness.ChartServers, version string) string {
	var b strings.Builder
	b.WriteString("applications:\n")
	for _, a := range []struct{ name, repository string }{
		{"oci", servers.OCIRepository()},
		{"http", servers.HelmRepository()},
	} {
		fmt.Fprintf(&b, `- metadata: {name: %s}
  spec:
    source:
      path: .
      render:
        type: helm
        helm:
          chart: {repository: %q, name: outage, version: %s, insecure: true}
    serviceAccountName: deployer
    sync: {automatic: true}
`, a.name, a.repository, version)
	}
	return b.String()
}

// outageChart is the chart outage, whose one ConfigMap records its version.
func outageChart(t *testing.T, version string) []byte {
	t.Helper()
	archive, err := harness.PackageChart(map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: outage\nversion: " + version + "\ntype: application\n",
		"templates/configmap.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: {{ .Release.Name }}-outage}
data: {chartVersion: {{ .Chart.Version | quote }}}
`,
	})
	if err != nil {
		t.Fatal(err)
	}
	return archive
}
