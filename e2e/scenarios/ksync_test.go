package scenarios_test

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	testgit "github.com/kuvryn/kuvryn-sync/pkg/testkit/git"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/logbuffer"
)

// TestE2E_KsyncAppsAndReposShowWhatTheControllersReport: Applications
// discovered from a .ksync.yaml and the Repositories they come from, synced
// by the real controllers, print as tables (plain, wide, across namespaces)
// whose every cell is what the objects hold, and as JSON and YAML Lists that
// decode strictly into the API types, equal the live objects, and are the
// same bytes when printed twice while nothing changed.
func TestE2E_KsyncAppsAndReposShowWhatTheControllersReport(t *testing.T) {
	ns := namespace(t, "e2e-ksync-list")
	platform := repository(t, ns, "platform", map[string]string{
		".ksync.yaml": `applications:
  - metadata: {name: worker}
    spec:
      source: {path: apps/worker}
      serviceAccountName: deployer
      sync: {automatic: true}
  - metadata: {name: api}
    spec:
      source: {path: apps/api}
      serviceAccountName: deployer
      sync: {automatic: true}
`,
		"apps/api/settings.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: api-settings}\ndata: {color: blue}\n",
		"apps/worker/settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: worker-settings}\ndata: {color: green}\n",
	})
	catalog := repository(t, ns, "catalog", map[string]string{"README.md": "no Applications here\n"})
	api := waitHealthy(t, ns, "api", "")
	worker := waitHealthy(t, ns, "worker", "")
	platformHead, catalogHead := head(t, platform), head(t, catalog)
	eventually(t, time.Minute, "both Repositories Ready at their head commit", func() bool {
		var repos syncv1.RepositoryList
		if err := env.Client.List(t.Context(), &repos, client.InNamespace(ns)); err != nil || len(repos.Items) != 2 {
			return false
		}
		for _, r := range repos.Items {
			want := map[string]string{"platform": platformHead, "catalog": catalogHead}[r.Name]
			if r.Status.Artifact == nil || r.Status.Artifact.Commit != want || !meta.IsStatusConditionTrue(r.Status.Conditions, syncv1.ConditionReady) {
				return false
			}
		}
		return true
	})
	for _, name := range []string{"api", "worker"} {
		if commit := get(t, &syncv1.Application{}, ns, name).Status.SourceCommit; commit != platformHead {
			t.Fatalf("Application %s rendered from commit %q, want the head %s", name, commit, platformHead)
		}
	}
	viewer := ksyncViewer(t)

	t.Run("apps table", func(t *testing.T) {
		header := []string{"NAME", "SYNC", "HEALTH", "PHASE", "DESIRED", "DEPLOYED", "AGE"}
		out, _ := mustKsync(t, viewer, "apps", "-n", ns)
		checkTable(t, "ksync apps", out, header,
			[]string{"api", "Synced", "Healthy", "Healthy", api, api, anyAge},
			[]string{"worker", "Synced", "Healthy", "Healthy", worker, worker, anyAge})

		out, _ = mustKsync(t, viewer, "apps", "-n", ns, "-o", "wide")
		checkTable(t, "ksync apps -o wide", out, append(header, "REPOSITORY", "PATH", "AUTOMATIC", "SHARD"),
			[]string{"api", "Synced", "Healthy", "Healthy", api, api, anyAge, "platform", "apps/api", "true", "-"},
			[]string{"worker", "Synced", "Healthy", "Healthy", worker, worker, anyAge, "platform", "apps/worker", "true", "-"})
	})

	t.Run("repos table", func(t *testing.T) {
		header := []string{"NAME", "URL", "REVISION", "COMMIT", "READY", "AGE"}
		out, _ := mustKsync(t, viewer, "repos", "-n", ns)
		checkTable(t, "ksync repos", out, header,
			[]string{"catalog", catalog.URL(), "main", catalogHead[:12], "True", anyAge},
			[]string{"platform", platform.URL(), "main", platformHead[:12], "True", anyAge})

		out, _ = mustKsync(t, viewer, "repos", "-n", ns, "-o", "wide")
		checkTable(t, "ksync repos -o wide", out, append(header, "FETCHED", "MESSAGE"),
			[]string{"catalog", catalog.URL(), "main", catalogHead[:12], "True", anyAge, anyAge, "fetched refs/heads/main at " + catalogHead},
			[]string{"platform", platform.URL(), "main", platformHead[:12], "True", anyAge, anyAge, "fetched refs/heads/main at " + platformHead})
	})

	t.Run("all namespaces", func(t *testing.T) {
		// Other scenarios' objects are listed too, so the expected rows come
		// from the live objects, read before and after ksync ran unchanged.
		var apps syncv1.ApplicationList
		var out string
		settled(t, "ksync apps -A", func() string { return listVersions(t, &apps) }, func() {
			out, _ = mustKsync(t, viewer, "apps", "-A")
		})
		sortByNamespaceAndName(apps.Items)
		var rows [][]string
		for _, a := range apps.Items {
			rows = append(rows, []string{a.Namespace, a.Name, string(a.Status.Sync), string(a.Status.Health), string(a.Status.Phase),
				a.Status.DesiredRevision, a.Status.DeployedRevision, anyAge})
		}
		checkTable(t, "ksync apps -A", out, []string{"NAMESPACE", "NAME", "SYNC", "HEALTH", "PHASE", "DESIRED", "DEPLOYED", "AGE"}, rows...)

		var repos syncv1.RepositoryList
		settled(t, "ksync repos -A -o wide", func() string { return listVersions(t, &repos) }, func() {
			out, _ = mustKsync(t, viewer, "repos", "-A", "-o", "wide")
		})
		sortByNamespaceAndName(repos.Items)
		rows = nil
		for _, r := range repos.Items {
			var commit, fetched, ready, message string
			if a := r.Status.Artifact; a != nil {
				commit, fetched = a.Commit[:min(12, len(a.Commit))], anyAge
			}
			if c := meta.FindStatusCondition(r.Status.Conditions, syncv1.ConditionReady); c != nil {
				ready, message = string(c.Status), c.Message
			}
			rows = append(rows, []string{r.Namespace, r.Name, r.Spec.Git.URL, r.Spec.Git.Revision, commit, ready, anyAge, fetched, message})
		}
		checkTable(t, "ksync repos -A -o wide", out,
			[]string{"NAMESPACE", "NAME", "URL", "REVISION", "COMMIT", "READY", "AGE", "FETCHED", "MESSAGE"}, rows...)

		var listed syncv1.ApplicationList
		out, _ = mustKsync(t, viewer, "apps", "-A", "-o", "json")
		decodeJSON(t, "ksync apps -A -o json", out, &listed)
		var mine []string
		for i, a := range listed.Items {
			if i > 0 && !namespaceAndNameBefore(listed.Items[i-1].ObjectMeta, a.ObjectMeta) {
				t.Errorf("ksync apps -A -o json lists %s/%s after %s/%s, want namespace then name order",
					a.Namespace, a.Name, listed.Items[i-1].Namespace, listed.Items[i-1].Name)
			}
			if a.Namespace == ns {
				mine = append(mine, a.Name)
			}
		}
		if !slices.Equal(mine, []string{"api", "worker"}) {
			t.Errorf("ksync apps -A -o json lists %v in %s, want [api worker]", mine, ns)
		}
	})

	t.Run("apps as JSON and YAML", func(t *testing.T) {
		checkListExport(t, viewer, ns, "apps", "Application", &syncv1.ApplicationList{}, &syncv1.ApplicationList{}, &syncv1.ApplicationList{})
	})
	t.Run("repos as JSON and YAML", func(t *testing.T) {
		checkListExport(t, viewer, ns, "repos", "Repository", &syncv1.RepositoryList{}, &syncv1.RepositoryList{}, &syncv1.RepositoryList{})
	})
}

// TestE2E_KsyncPlanApproveAndHistoryNeverShowSecretValues: a manual
// Application whose source holds a Secret is planned by the sync-controller;
// `ksync plan` lists the Secret in every format without its values, as do
// `ksync apps` and `ksync history`; `ksync approve` deploys it and `ksync
// history` exports and shows the approval; after a push, `--revision`
// shows the plan of the older Revision.
func TestE2E_KsyncPlanApproveAndHistoryNeverShowSecretValues(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-ksync-secret")
	password, token := secretValue(), secretValue()
	values := secretValues{password, token}
	gitRepo := repository(t, ns, "platform", map[string]string{
		".ksync.yaml": `metadata: {name: ledger}
spec:
  source: {path: app}
  serviceAccountName: deployer
  sync: {automatic: false}
`,
		"app/credentials.yaml": `apiVersion: v1
kind: Secret
metadata: {name: ledger-credentials}
type: Opaque
stringData: {password: "` + password + `"}
data: {token: "` + base64.StdEncoding.EncodeToString([]byte(token)) + `"}
`,
		"app/settings.yaml": settingsYAML("blue"),
	})
	first := awaitingApproval(t, ns, "ledger", "")
	carol := userKubeconfig(t, "carol", ns)

	t.Run("plan lists the Secret without its values", func(t *testing.T) {
		secret := planEntry(first.Status.Plan, "Secret", "ledger-credentials")
		if secret == nil || secret.Action != syncv1.ActionCreate || !containsAll(secret.Diff, "password", "token") {
			t.Fatalf("the plan of Revision %s does not create the Secret with its keys: %+v", first.Name, secret)
		}
		checkPlanOutputs(t, carol, values, first, "plan", "ledger", "-n", ns)
	})

	t.Run("apps prints no Secret value", func(t *testing.T) {
		for _, format := range []string{"table", "wide", "json", "yaml"} {
			out, errOut := mustKsync(t, carol, "apps", "-n", ns, "-o", format)
			values.check(t, "ksync apps -o "+format, out, errOut)
		}
	})

	t.Run("approve then history exports the approval", func(t *testing.T) {
		out, errOut := mustKsync(t, carol, "approve", "ledger", "-n", ns, "--yes")
		values.check(t, "ksync approve", out, errOut)
		if !strings.Contains(out, first.Status.Plan.Digest) {
			t.Fatalf("ksync approve did not show the plan digest %s:\n%s", first.Status.Plan.Digest, out)
		}
		if deployed := waitHealthy(t, ns, "ledger", ""); deployed != first.Name {
			t.Fatalf("deployed Revision %s, want the approved %s", deployed, first.Name)
		}
		// The deployed Secret carries the value, so its absence from every
		// output above is redaction, not a value that never arrived.
		if got := get(t, &corev1.Secret{}, ns, "ledger-credentials").Data["password"]; string(got) != password {
			t.Fatal("the deployed Secret ledger-credentials does not hold the password from Git")
		}

		var app syncv1.Application
		var exported, second string
		settled(t, "ksync history -o json twice", func() string { return objectVersion(t, &app, client.ObjectKey{Namespace: ns, Name: "ledger"}) }, func() {
			exported, _ = mustKsync(t, carol, "history", "ledger", "-n", ns, "-o", "json")
			second, _ = mustKsync(t, carol, "history", "ledger", "-n", ns, "-o", "json")
		})
		if exported != second {
			t.Fatalf("ksync history -o json printed different bytes for an unchanged Application:\n%s\nthen\n%s", exported, second)
		}
		values.check(t, "ksync history -o json", exported)
		var h historyExport
		decodeJSON(t, "ksync history -o json", exported, &h)
		if h.Namespace != ns || h.Application != "ledger" || h.DesiredRevision != first.Name || h.DeployedRevision != first.Name ||
			!equality.Semantic.DeepEqual(h.History, app.Status.History) {
			t.Fatalf("ksync history -o json = %+v, want the status of Application %s/ledger %+v", h, ns, app.Status)
		}
		if len(h.History) != 1 {
			t.Fatalf("ksync history -o json has %d entries, want the one deployment", len(h.History))
		}
		e, digest := h.History[0], first.Status.Plan.Digest
		if e.Revision != first.Name || e.Result != syncv1.PhaseHealthy || e.PlanDigest != digest || e.SourceCommit != head(t, gitRepo) {
			t.Errorf("history entry %+v, want Revision %s Healthy with plan %s from the head commit", e, first.Name, digest)
		}
		if a := e.Approval; a == nil || a.By != "carol" || a.Digest != digest || a.Revision != first.Name || a.At.IsZero() {
			t.Errorf("history entry approval %+v, want carol's approval of plan %s of Revision %s", a, digest, first.Name)
		}

		var fromYAML historyExport
		out, errOut = mustKsync(t, carol, "history", "ledger", "-n", ns, "-o", "yaml")
		values.check(t, "ksync history -o yaml", out, errOut)
		decodeYAML(t, "ksync history -o yaml", out, &fromYAML)
		if !equality.Semantic.DeepEqual(fromYAML, h) {
			t.Errorf("ksync history -o yaml and -o json disagree:\n%s\n%s", out, exported)
		}

		header := []string{"REVISION", "RESULT", "REASON", "STARTED", "FINISHED", "APPROVED-BY", "ROLLBACK"}
		row := []string{e.Revision, "Healthy", e.Reason, timestamp(e.StartedAt), timestamp(e.FinishedAt), "carol", ""}
		out, errOut = mustKsync(t, carol, "history", "ledger", "-n", ns)
		values.check(t, "ksync history", out, errOut)
		checkTable(t, "ksync history", out, header, row)
		out, errOut = mustKsync(t, carol, "history", "ledger", "-n", ns, "-o", "wide")
		values.check(t, "ksync history -o wide", out, errOut)
		checkTable(t, "ksync history -o wide", out, append(header, "COMMIT", "PLAN", "APPROVED-AT", "DRIFT"),
			append(row, e.SourceCommit[:12], shortDigest(digest), timestamp(&e.Approval.At), ""))
	})

	t.Run("revision flag shows an older Revision", func(t *testing.T) {
		if _, err := gitRepo.Commit(map[string]string{"app/settings.yaml": settingsYAML("green")}, "green"); err != nil {
			t.Fatal(err)
		}
		second := awaitingApproval(t, ns, "ledger", first.Name)
		checkPlanOutputs(t, carol, values, second, "plan", "ledger", "-n", ns)
		checkPlanOutputs(t, carol, values, get(t, &syncv1.Revision{}, ns, first.Name), "plan", "ledger", "-n", ns, "--revision", first.Name)
	})
}

// TestE2E_KsyncApproveRefusesAPlanThatChangedWhileAsking: while `ksync
// approve` waits for its answer, live state changes and another user's
// approval of the plan shown makes the sync-controller plan again; the
// answer "y" then gets the webhook's refusal naming the new digest, exit
// code 1, and leaves the other user's approval in place. Approving again
// approves the new plan.
func TestE2E_KsyncApproveRefusesAPlanThatChangedWhileAsking(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-ksync-stale")
	limits := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: limits}\ndata: {max: \"100\"}\n"
	repository(t, ns, "platform", map[string]string{
		".ksync.yaml": `metadata: {name: ledger}
spec:
  source: {path: app}
  serviceAccountName: deployer
  sync: {automatic: false}
`,
		"app/settings.yaml": settingsYAML("blue"),
		"app/limits.yaml":   limits,
	})
	rev := awaitingApproval(t, ns, "ledger", "")
	shown := rev.Status.Plan.Digest
	if e := planEntry(rev.Status.Plan, "ConfigMap", "limits"); e == nil || e.Action != syncv1.ActionCreate {
		t.Fatalf("the plan of Revision %s does not create ConfigMap limits: %+v", rev.Name, e)
	}
	carol := userKubeconfig(t, "carol", ns)

	cmd := exec.CommandContext(t.Context(), filepath.Join(env.Root, "bin", "ksync"), "approve", "ledger", "-n", ns)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+carol, "NO_COLOR=1")
	var stdout, stderr logbuffer.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	eventually(t, time.Minute, "ksync approve to ask", func() bool {
		select {
		case err := <-done:
			t.Fatalf("ksync approve exited before asking: %v\n%s%s", err, stdout.String(), stderr.String())
		default:
		}
		return strings.Contains(stdout.String(), "Approve this plan?")
	})
	if !strings.Contains(stdout.String(), "Plan digest:  "+shown) {
		t.Fatalf("ksync approve asked without showing the plan digest %s:\n%s", shown, stdout.String())
	}

	// Live state changes: the object the plan creates now exists, with the
	// desired content so that applying it later does not conflict.
	err = env.Client.Create(t.Context(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "limits"},
		Data:       map[string]string{"max": "100"},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Another user approves the plan as shown; the sync-controller checks
	// that approval against a fresh plan and finds it stale.
	app := &syncv1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ledger"}}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		syncv1.ApprovedRevisionAnnotation: rev.Name,
		syncv1.ApproveDigestAnnotation:    shown,
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Patch(t.Context(), app, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("approving plan %s as admin: %v", shown, err)
	}
	admin := app.Annotations[syncv1.ApprovedByAnnotation]
	if admin == "" || admin == "carol" {
		t.Fatalf("the webhook recorded the admin's approval as by %q", admin)
	}
	var current string
	eventually(t, time.Minute, "the admin's approval found stale and the plan replaced", func() bool {
		r := get(t, &syncv1.Revision{}, ns, rev.Name)
		c := meta.FindStatusCondition(r.Status.Conditions, syncv1.ConditionAwaitingApproval)
		if r.Status.Plan == nil || r.Status.Plan.Digest == shown || c == nil || c.Reason != syncv1.ReasonApprovalStale {
			return false
		}
		current = r.Status.Plan.Digest
		if r.Status.Phase != syncv1.PhaseAwaitingApproval {
			t.Fatalf("Revision %s is %s under a stale approval, want AwaitingApproval", rev.Name, r.Status.Phase)
		}
		if e := planEntry(r.Status.Plan, "ConfigMap", "limits"); e == nil || e.Action == syncv1.ActionCreate {
			t.Fatalf("the new plan %s still creates ConfigMap limits: %+v", current, e)
		}
		return true
	})

	if _, err := stdin.Write([]byte("y\n")); err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	var exitErr error
	eventually(t, time.Minute, "ksync approve to exit", func() bool {
		select {
		case exitErr = <-done:
			return true
		default:
			return false
		}
	})
	if code := exitCode(exitErr); code != 1 || !containsAll(stderr.String(), "approval refused", current) {
		t.Fatalf("ksync approve of the changed plan: exit code %d, stderr:\n%s\nwant exit code 1 and a refusal naming the current digest %s",
			code, stderr.String(), current)
	}
	app = get(t, &syncv1.Application{}, ns, "ledger")
	if by, digest := app.Annotations[syncv1.ApprovedByAnnotation], app.Annotations[syncv1.ApprovedDigestAnnotation]; by != admin || digest != shown {
		t.Fatalf("after the refusal the approval is by %q of %q, want still %s's of %s", by, digest, admin, shown)
	}

	out, errOut := mustKsync(t, carol, "approve", "ledger", "-n", ns, "--yes")
	if !strings.Contains(out, current) {
		t.Fatalf("ksync approve did not show the current digest %s:\n%s%s", current, out, errOut)
	}
	if deployed := waitHealthy(t, ns, "ledger", ""); deployed != rev.Name {
		t.Fatalf("deployed Revision %s, want %s", deployed, rev.Name)
	}
	if a := get(t, &syncv1.Revision{}, ns, rev.Name).Status.Approval; a == nil || a.By != "carol" || a.Digest != current {
		t.Fatalf("status.approval = %+v, want carol's approval of %s", a, current)
	}
}

// TestE2E_KsyncVersionUsageAndUnknownApplication: `ksync version` prints
// the build's version; bad usage exits 2; a command about an Application
// that does not exist exits 1 naming it.
func TestE2E_KsyncVersionUsageAndUnknownApplication(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-ksync-cli")
	viewer := ksyncViewer(t)

	out, _ := mustKsync(t, viewer, "version")
	if !regexp.MustCompile(`^ksync \S+\n$`).MatchString(out) {
		t.Errorf("ksync version printed %q, want \"ksync <version>\"", out)
	}

	for _, args := range [][]string{
		{"apps", "-n", ns, "--no-such-flag"},
		{"apps", "-n", ns, "-o", "xml"},
		{"plan", "-n", ns},
		{"no-such-command"},
	} {
		out, errOut, err := ksync(t, viewer, args...)
		if code := exitCode(err); code != 2 || !strings.HasPrefix(errOut, "ksync: ") {
			t.Errorf("ksync %s: exit code %d, stdout %q, stderr %q; want exit code 2 and the reason on stderr",
				strings.Join(args, " "), code, out, errOut)
		}
	}

	for _, args := range [][]string{
		{"plan", "no-such-app"},
		{"history", "no-such-app"},
		{"approve", "no-such-app", "--yes"},
		{"rollback", "no-such-app", "--yes"},
	} {
		args = append(args, "-n", ns)
		out, errOut, err := ksync(t, viewer, args...)
		if code := exitCode(err); code != 1 || !containsAll(errOut, "Application "+ns+"/no-such-app", "not found") {
			t.Errorf("ksync %s: exit code %d, stdout %q, stderr %q; want exit code 1 and the Application named not found",
				strings.Join(args, " "), code, out, errOut)
		}
	}
}

// historyExport is the document of `ksync history -o json|yaml`.
type historyExport struct {
	Namespace        string                `json:"namespace"`
	Application      string                `json:"application"`
	DesiredRevision  string                `json:"desiredRevision,omitempty"`
	DeployedRevision string                `json:"deployedRevision,omitempty"`
	History          []syncv1.HistoryEntry `json:"history"`
}

// planExport is the document of `ksync plan -o json|yaml`.
type planExport struct {
	Namespace   string               `json:"namespace"`
	Application string               `json:"application"`
	Revision    string               `json:"revision"`
	Phase       syncv1.RevisionPhase `json:"phase,omitempty"`
	Plan        syncv1.Plan          `json:"plan"`
}

// checkPlanOutputs runs the ksync plan command args in every format and
// checks each against rev, whose plan the sync-controller wrote: the table
// is the expected text built from status, JSON and YAML decode into the same
// plan, JSON printed twice is the same bytes, no Secret value appears and
// ksync found nothing to hide, since status is redacted already.
func checkPlanOutputs(t *testing.T, kubeconfig string, values secretValues, rev *syncv1.Revision, args ...string) {
	t.Helper()
	what := "ksync " + strings.Join(args, " ")
	var live syncv1.Revision
	var table, tableErr, first, second string
	settled(t, what, func() string { return objectVersion(t, &live, client.ObjectKeyFromObject(rev)) }, func() {
		table, tableErr = mustKsync(t, kubeconfig, args...)
		first, _ = mustKsync(t, kubeconfig, append(args, "-o", "json")...)
		second, _ = mustKsync(t, kubeconfig, append(args, "-o", "json")...)
	})
	yamlOut, yamlErr := mustKsync(t, kubeconfig, append(args, "-o", "yaml")...)
	values.check(t, what, table, tableErr, first, yamlOut, yamlErr)
	if tableErr != "" || yamlErr != "" {
		t.Errorf("%s wrote to stderr (a hidden Secret value means status was not redacted):\n%s%s", what, tableErr, yamlErr)
	}
	if live.Status.Plan == nil || live.Status.Plan.Digest != rev.Status.Plan.Digest {
		t.Fatalf("the plan of Revision %s changed from %s while it was printed", rev.Name, rev.Status.Plan.Digest)
	}
	if want := planText(live.Name, live.Status.Plan); table != want {
		t.Errorf("%s printed\n%s\nwant\n%s", what, table, want)
	}
	if first != second {
		t.Errorf("%s -o json printed different bytes for an unchanged Revision:\n%s\nthen\n%s", what, first, second)
	}
	want := planExport{Namespace: live.Namespace, Application: live.Spec.ApplicationName, Revision: live.Name,
		Phase: live.Status.Phase, Plan: *live.Status.Plan}
	var fromJSON, fromYAML planExport
	decodeJSON(t, what+" -o json", first, &fromJSON)
	decodeYAML(t, what+" -o yaml", yamlOut, &fromYAML)
	for format, got := range map[string]planExport{"json": fromJSON, "yaml": fromYAML} {
		if !equality.Semantic.DeepEqual(got, want) {
			t.Errorf("%s -o %s = %+v, want the Revision's status.plan %+v", what, format, got, want)
		}
	}
}

// planText is what `ksync plan` prints for a plan with no entry or diff
// left out: the digest and summary, the entries' table, then each diff
// indented by four spaces.
func planText(revision string, p *syncv1.Plan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Revision:  %s\nDigest:    %s\n", revision, p.Digest)
	if !p.PlannedAt.IsZero() {
		fmt.Fprintf(&b, "Planned:   %s\n", timestamp(&p.PlannedAt))
	}
	s := p.Summary
	fmt.Fprintf(&b, "Summary:   %d to create, %d to update, %d to delete, %d unchanged\n", s.Create, s.Update, s.Delete, s.Unchanged)
	if len(p.Entries) == 0 {
		return b.String()
	}
	rows := [][]string{{"ACTION", "KIND", "NAMESPACE/NAME", "WAVE", "HOOK"}}
	for _, e := range p.Entries {
		rows = append(rows, []string{string(e.Action), e.Kind, objectName(e.ObjectRef), strconv.Itoa(int(e.Wave)), e.Hook})
	}
	b.WriteString("\n" + layout(rows))
	for _, e := range p.Entries {
		if e.Diff == "" {
			continue
		}
		fmt.Fprintf(&b, "\nDiff of %s %s (%s):\n", e.Kind, objectName(e.ObjectRef), e.Action)
		for _, line := range strings.Split(strings.TrimSuffix(e.Diff, "\n"), "\n") {
			b.WriteString("    " + line + "\n")
		}
	}
	return b.String()
}

func objectName(ref syncv1.ObjectRef) string {
	if ref.Namespace == "" {
		return ref.Name
	}
	return ref.Namespace + "/" + ref.Name
}

func planEntry(p *syncv1.Plan, kind, name string) *syncv1.PlanEntry {
	if p == nil {
		return nil
	}
	for i, e := range p.Entries {
		if e.Kind == kind && e.Name == name {
			return &p.Entries[i]
		}
	}
	return nil
}

// awaitingApproval waits until a manual Application's desired Revision,
// other than previous, is planned and waits for approval, and returns it.
func awaitingApproval(t *testing.T, ns, name, previous string) *syncv1.Revision {
	t.Helper()
	var rev syncv1.Revision
	eventually(t, 3*time.Minute, "Application "+name+" awaiting approval of a new Revision", func() bool {
		app := &syncv1.Application{}
		if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, app); err != nil ||
			app.Status.DesiredRevision == "" || app.Status.DesiredRevision == previous {
			return false
		}
		err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: app.Status.DesiredRevision}, &rev)
		return err == nil && rev.Status.Phase == syncv1.PhaseAwaitingApproval && rev.Status.Plan != nil && rev.Status.Plan.Digest != ""
	})
	return &rev
}

// secretValues are plaintext Secret values that no output may contain, in
// any of the forms the API carries them.
type secretValues []string

// secretValue is a value no output could contain by chance.
func secretValue() string {
	return "kuvryn-e2e-secret-" + rand.Text()
}

func (s secretValues) check(t *testing.T, what string, outputs ...string) {
	t.Helper()
	for _, v := range s {
		random := strings.TrimPrefix(v, "kuvryn-e2e-secret-")
		forms := []string{random, base64.StdEncoding.EncodeToString([]byte(v)), base64.StdEncoding.EncodeToString([]byte(random))}
		for _, out := range outputs {
			for _, form := range forms {
				if strings.Contains(out, form) {
					t.Errorf("%s printed a Secret value (%q):\n%s", what, form, out)
				}
			}
		}
	}
}

// ksyncViewer writes a kubeconfig for a user who may read Applications,
// Repositories and Revisions in every namespace, as `ksync -A` needs.
func ksyncViewer(t *testing.T) string {
	t.Helper()
	const user = "e2e-ksync-viewer"
	return kubeconfigWithRBAC(t, user, `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: `+user+`}
rules:
  - apiGroups: [sync.kuvryn.io]
    resources: [applications, repositories, revisions]
    verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: `+user+`}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: `+user+`}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: `+user+`}]
`)
}

// mustKsync runs ksync and fails the test unless it exits 0.
func mustKsync(t *testing.T, kubeconfig string, args ...string) (stdout, stderr string) {
	t.Helper()
	out, errOut, err := ksync(t, kubeconfig, args...)
	if err != nil {
		t.Fatalf("ksync %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
	}
	return out, errOut
}

// exitCode is the exit code of a finished ksync, -1 if it did not run.
func exitCode(err error) int {
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitCode()
	}
	return -1
}

// settled runs run until read, which reads the objects ksync prints and
// returns their resourceVersions, reports the same before and after it:
// only then can what ksync printed be compared exactly with what read left
// in its variables. The controllers may write at any time, so a run that
// overlapped a write is repeated rather than failed.
func settled(t *testing.T, what string, read func() string, run func()) {
	t.Helper()
	eventually(t, 2*time.Minute, what+" while the objects did not change", func() bool {
		before := read()
		run()
		return read() == before
	})
}

// listVersions lists into list as admin and returns the items'
// resourceVersions, for settled.
func listVersions(t *testing.T, list client.ObjectList, opts ...client.ListOption) string {
	t.Helper()
	if err := env.Client.List(t.Context(), list, opts...); err != nil {
		t.Fatal(err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, item := range items {
		m, err := meta.Accessor(item)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s/%s@%s ", m.GetNamespace(), m.GetName(), m.GetResourceVersion())
	}
	return b.String()
}

// objectVersion reads obj as admin and returns its resourceVersion, for settled.
func objectVersion(t *testing.T, obj client.Object, key client.ObjectKey) string {
	t.Helper()
	if err := env.Client.Get(t.Context(), key, obj); err != nil {
		t.Fatal(err)
	}
	return obj.GetResourceVersion()
}

// anyAge stands in an expected table row for an age. Ages are relative to
// the moment ksync ran, and the objects' names, URLs and commits to the
// run, so no golden file can hold these tables; instead the expected text is
// built from the live objects, and an age cell takes what ksync printed
// there once it is checked to be a kubectl-style age.
const anyAge = "<age>"

var ageFormat = regexp.MustCompile(`^[0-9]+[smhdy]([0-9]+[smhd])?$`)

// checkTable compares a table ksync printed with the table of header and
// rows laid out as ksync specifies, anyAge cells taken from what it printed.
func checkTable(t *testing.T, what, got string, header []string, rows ...[]string) {
	t.Helper()
	lines := strings.Split(got, "\n")
	starts := columnStarts(lines[0])
	want := [][]string{header}
	for i, row := range rows {
		row = slices.Clone(row)
		for c := range row {
			if row[c] != anyAge || i+1 >= len(lines) || c >= len(starts) || len(lines[i+1]) < starts[c] {
				continue
			}
			line, end := lines[i+1], len(lines[i+1])
			if c+1 < len(starts) {
				end = min(end, starts[c+1])
			}
			if age := strings.TrimSpace(line[starts[c]:end]); ageFormat.MatchString(age) {
				row[c] = age
			}
		}
		want = append(want, row)
	}
	if w := layout(want); got != w {
		t.Errorf("%s printed\n%s\nwant\n%s", what, got, w)
	}
}

// columnStarts returns where each word of a table's header line starts.
func columnStarts(header string) []int {
	var starts []int
	for i := range len(header) {
		if header[i] != ' ' && (i == 0 || header[i-1] == ' ') {
			starts = append(starts, i)
		}
	}
	return starts
}

// layout lays rows out as ksync's tables are specified, like kubectl's:
// each column as wide as its widest cell plus three spaces, the last one
// unpadded, and an empty cell printed as "-".
func layout(rows [][]string) string {
	cell := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	var widths []int
	for _, row := range rows {
		for c, s := range row {
			if c >= len(widths) {
				widths = append(widths, 0)
			}
			widths[c] = max(widths[c], len(cell(s)))
		}
	}
	var b strings.Builder
	for _, row := range rows {
		for c, s := range row {
			if c == len(row)-1 {
				b.WriteString(cell(s) + "\n")
				continue
			}
			b.WriteString(cell(s) + strings.Repeat(" ", widths[c]-len(cell(s))+3))
		}
	}
	return b.String()
}

// decodeJSON decodes ksync's JSON into v, refusing fields v does not have
// and anything after the document.
func decodeJSON(t *testing.T, what, data string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s is not a %T: %v\n%s", what, v, err, data)
	}
	if dec.More() {
		t.Fatalf("%s printed more than one document:\n%s", what, data)
	}
}

// decodeYAML decodes ksync's YAML into v, refusing fields v does not have.
func decodeYAML(t *testing.T, what, data string, v any) {
	t.Helper()
	if err := yaml.UnmarshalStrict([]byte(data), v); err != nil {
		t.Fatalf("%s is not a %T: %v\n%s", what, v, err, data)
	}
}

// checkList checks the List envelope ksync printed and its length.
func checkList(t *testing.T, what string, tm metav1.TypeMeta, kind string, got, want int) {
	t.Helper()
	if tm.APIVersion != syncv1.GroupVersion.String() || tm.Kind != kind || got != want {
		t.Fatalf("%s is a %s %s with %d items, want a %s %s with %d", what, tm.APIVersion, tm.Kind, got, syncv1.GroupVersion, kind, want)
	}
}

// checkListExport runs `ksync <command> -o json` twice and `-o yaml` in ns
// while the objects do not change: the JSON is the same bytes twice and
// decodes strictly into a <kind>List whose items equal the live objects as
// ksync exports them, and the YAML decodes into the same List. live,
// fromJSON and fromYAML are empty Lists of that kind.
func checkListExport(t *testing.T, viewer, ns, command, kind string, live, fromJSON, fromYAML client.ObjectList) {
	t.Helper()
	what := "ksync " + command
	var first, second, yamlOut string
	settled(t, what+" -o json twice and -o yaml", func() string { return listVersions(t, live, client.InNamespace(ns)) }, func() {
		first, _ = mustKsync(t, viewer, command, "-n", ns, "-o", "json")
		second, _ = mustKsync(t, viewer, command, "-n", ns, "-o", "json")
		yamlOut, _ = mustKsync(t, viewer, command, "-n", ns, "-o", "yaml")
	})
	if first != second {
		t.Fatalf("%s -o json printed different bytes for unchanged objects:\n%s\nthen\n%s", what, first, second)
	}
	decodeJSON(t, what+" -o json", first, fromJSON)
	liveItems, err := meta.ExtractList(live)
	if err != nil {
		t.Fatal(err)
	}
	gotItems, err := meta.ExtractList(fromJSON)
	if err != nil {
		t.Fatal(err)
	}
	gvk := fromJSON.GetObjectKind().GroupVersionKind()
	checkList(t, what+" -o json", metav1.TypeMeta{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind}, kind+"List", len(gotItems), len(liveItems))
	for i := range liveItems {
		want := exported(liveItems[i].(client.Object), kind)
		if !equality.Semantic.DeepEqual(gotItems[i], want) {
			t.Errorf("%s -o json item %d:\n%+v\nwant the live %s without managedFields:\n%+v", what, i, gotItems[i], kind, want)
		}
	}
	decodeYAML(t, what+" -o yaml", yamlOut, fromYAML)
	if !equality.Semantic.DeepEqual(fromYAML, fromJSON) {
		t.Errorf("%s -o yaml and -o json disagree:\n%s\n%s", what, yamlOut, first)
	}
}

// exported is obj as ksync exports it: with its kind and no managedFields.
func exported[T client.Object](obj T, kind string) T {
	obj = obj.DeepCopyObject().(T)
	obj.GetObjectKind().SetGroupVersionKind(syncv1.GroupVersion.WithKind(kind))
	obj.SetManagedFields(nil)
	return obj
}

func sortByNamespaceAndName[T any, P interface {
	*T
	client.Object
}](items []T) {
	slices.SortFunc(items, func(a, b T) int {
		pa, pb := P(&a), P(&b)
		if c := strings.Compare(pa.GetNamespace(), pb.GetNamespace()); c != 0 {
			return c
		}
		return strings.Compare(pa.GetName(), pb.GetName())
	})
}

func namespaceAndNameBefore(a, b metav1.ObjectMeta) bool {
	return a.Namespace < b.Namespace || (a.Namespace == b.Namespace && a.Name < b.Name)
}

// head returns the commit at the tip of a served repository's main branch.
func head(t *testing.T, r *testgit.Repo) string {
	t.Helper()
	commit, err := r.Head("main")
	if err != nil {
		t.Fatal(err)
	}
	return commit
}

// shortDigest is how ksync abbreviates a digest: the algorithm and 12 hex digits.
func shortDigest(digest string) string {
	algorithm, hex, _ := strings.Cut(digest, ":")
	return algorithm + ":" + hex[:min(12, len(hex))]
}

// timestamp is how ksync prints a time: RFC 3339 in UTC.
func timestamp(at *metav1.Time) string {
	if at == nil || at.IsZero() {
		return ""
	}
	return at.UTC().Format(time.RFC3339)
}
