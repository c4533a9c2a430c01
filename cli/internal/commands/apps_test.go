package commands

import (
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// rows returns the whitespace-separated fields of each table line.
func rows(out string) [][]string {
	var r [][]string
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		r = append(r, strings.Fields(line))
	}
	return r
}

func hasRow(table [][]string, prefix ...string) bool {
	for _, row := range table {
		if len(row) >= len(prefix) && strings.Join(row[:len(prefix)], " ") == strings.Join(prefix, " ") {
			return true
		}
	}
	return false
}

func setupApplications(t *testing.T) {
	t.Helper()
	a := namespace(t, "apps-a", nil)
	b := namespace(t, "apps-b", nil)
	api := application(a, "api")
	api.Spec.Sync.Automatic = true
	api.Status = syncv1.ApplicationStatus{
		Sync: syncv1.SyncStateSynced, Health: syncv1.HealthHealthy, Phase: syncv1.PhaseHealthy,
		DesiredRevision: "api-1", DeployedRevision: "api-1",
	}
	createApplication(t, api)
	worker := application(a, "worker")
	worker.Status = syncv1.ApplicationStatus{
		Sync: syncv1.SyncStateOutOfSync, Health: syncv1.HealthDegraded, Phase: syncv1.PhaseAwaitingApproval,
		DesiredRevision: "worker-2", DeployedRevision: "worker-1",
	}
	createApplication(t, worker)
	createApplication(t, application(b, "site"))
}

func TestApps_ListsApplications(t *testing.T) {
	setupApplications(t)

	t.Run("in the namespace given with -n", func(t *testing.T) {
		r := ksync(t, "apps", "-n", "apps-a")
		r.expect(t, 0)
		table := rows(r.stdout)
		if got := strings.Join(table[0], " "); got != "NAME SYNC HEALTH PHASE DESIRED DEPLOYED AGE" {
			t.Errorf("header %q", got)
		}
		if len(table) != 3 || !hasRow(table, "api", "Synced", "Healthy", "Healthy", "api-1", "api-1") ||
			!hasRow(table, "worker", "OutOfSync", "Degraded", "AwaitingApproval", "worker-2", "worker-1") {
			t.Errorf("table:\n%s", r.stdout)
		}
	})
	t.Run("in the context's namespace without -n", func(t *testing.T) {
		r := ksync(t, "apps", "--kubeconfig", kubeconfigWithNamespace(t, "apps-b"))
		r.expect(t, 0)
		if table := rows(r.stdout); len(table) != 2 || !hasRow(table, "site", "-", "-", "-", "-", "-") {
			t.Errorf("table:\n%s", r.stdout)
		}
	})
	t.Run("through KUBECONFIG", func(t *testing.T) {
		t.Setenv("KUBECONFIG", kubeconfigWithNamespace(t, "apps-b"))
		var out, errOut strings.Builder
		if code := Run([]string{"ksync", "apps"}, &out, &errOut); code != 0 {
			t.Fatalf("exit code %d: %s", code, errOut.String())
		}
		if !hasRow(rows(out.String()), "site") {
			t.Errorf("table:\n%s", out.String())
		}
	})
	t.Run("across namespaces with -A", func(t *testing.T) {
		r := ksync(t, "apps", "-A")
		r.expect(t, 0)
		table := rows(r.stdout)
		if table[0][0] != "NAMESPACE" || !hasRow(table, "apps-a", "api", "Synced") || !hasRow(table, "apps-a", "worker") || !hasRow(table, "apps-b", "site") {
			t.Errorf("table:\n%s", r.stdout)
		}
	})
	t.Run("wide adds repository, path, automatic and shard", func(t *testing.T) {
		r := ksync(t, "apps", "-n", "apps-a", "-o", "wide")
		r.expect(t, 0)
		table := rows(r.stdout)
		if got := strings.Join(table[0][7:], " "); got != "REPOSITORY PATH AUTOMATIC SHARD" {
			t.Errorf("wide columns %q", got)
		}
		for _, row := range table[1:] {
			if row[0] == "api" && strings.Join(row[7:], " ") != "platform envs/api true -" {
				t.Errorf("api row %q", row)
			}
		}
	})
	t.Run("as stable JSON without managed fields", func(t *testing.T) {
		first := ksync(t, "apps", "-n", "apps-a", "-o", "json")
		first.expect(t, 0)
		var list syncv1.ApplicationList
		if err := json.Unmarshal([]byte(first.stdout), &list); err != nil {
			t.Fatalf("-o json is not JSON: %v\n%s", err, first.stdout)
		}
		if list.Kind != "ApplicationList" || list.APIVersion != syncv1.GroupVersion.String() || len(list.Items) != 2 ||
			list.Items[0].Name != "api" || list.Items[0].Kind != "Application" || list.Items[1].Status.DesiredRevision != "worker-2" {
			t.Errorf("list: %+v", list)
		}
		if strings.Contains(first.stdout, "managedFields") {
			t.Error("-o json shows managedFields")
		}
		if again := ksync(t, "apps", "-n", "apps-a", "-o", "json"); again.stdout != first.stdout {
			t.Errorf("-o json changed between runs:\n%s\n%s", first.stdout, again.stdout)
		}
	})
	t.Run("as YAML", func(t *testing.T) {
		r := ksync(t, "apps", "-n", "apps-b", "-o", "yaml")
		r.expect(t, 0)
		var list syncv1.ApplicationList
		if err := yaml.UnmarshalStrict([]byte(r.stdout), &list); err != nil || len(list.Items) != 1 || list.Items[0].Name != "site" {
			t.Errorf("-o yaml: %v\n%s", err, r.stdout)
		}
	})
	t.Run("shell completion offers the Application names", func(t *testing.T) {
		r := ksync(t, "plan", "-n", "apps-a", "--kubeconfig", cluster(t), "--generate-bash-completion")
		r.expect(t, 0)
		if r.stdout != "api\nworker\n" {
			t.Errorf("completion %q", r.stdout)
		}
	})
	t.Run("none found is said on stderr", func(t *testing.T) {
		r := ksync(t, "apps", "-n", "apps-none")
		r.expect(t, 0)
		if r.stdout != "" || r.stderr != "No Applications found in namespace apps-none.\n" {
			t.Errorf("stdout %q stderr %q", r.stdout, r.stderr)
		}
	})
}

func TestRepos_ListsRepositories(t *testing.T) {
	ns := namespace(t, "repos", nil)
	repo := &syncv1.Repository{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "platform"},
		Spec:       syncv1.RepositorySpec{Git: syncv1.GitSource{URL: "https://git.example.com/platform.git", Revision: "main"}},
	}
	if err := k8s.Create(t.Context(), repo); err != nil {
		t.Fatal(err)
	}
	repo.Status = syncv1.RepositoryStatus{
		Conditions: []metav1.Condition{{
			Type: syncv1.ConditionReady, Status: metav1.ConditionTrue, Reason: syncv1.ReasonSucceeded,
			Message: "fetched", LastTransitionTime: metav1.Now(),
		}},
		Artifact: &syncv1.Artifact{Revision: "refs/heads/main", Commit: strings.Repeat("0123456789", 4), FetchedAt: metav1.Now()},
	}
	if err := k8s.Status().Update(t.Context(), repo); err != nil {
		t.Fatal(err)
	}
	other := &syncv1.Repository{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pending"},
		Spec:       syncv1.RepositorySpec{Git: syncv1.GitSource{URL: "ssh://git@git.example.com/pending.git"}},
	}
	if err := k8s.Create(t.Context(), other); err != nil {
		t.Fatal(err)
	}

	r := ksync(t, "repos", "-n", ns)
	r.expect(t, 0)
	table := rows(r.stdout)
	if got := strings.Join(table[0], " "); got != "NAME URL REVISION COMMIT READY AGE" {
		t.Errorf("header %q", got)
	}
	if !hasRow(table, "platform", "https://git.example.com/platform.git", "main", "012345678901", "True") ||
		!hasRow(table, "pending", "ssh://git@git.example.com/pending.git", "main", "-", "-") {
		t.Errorf("table:\n%s", r.stdout)
	}

	r = ksync(t, "repos", "-A", "-o", "json")
	r.expect(t, 0)
	var list syncv1.RepositoryList
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list.Items) != 2 ||
		list.Items[0].Name != "pending" || list.Items[1].Status.Artifact == nil {
		t.Errorf("-o json: %v\n%s", err, r.stdout)
	}
}

func TestCommands_UnknownApplicationFailsNamingIt(t *testing.T) {
	ns := namespace(t, "unknown", nil)
	for _, args := range [][]string{
		{"plan", "nope", "-n", ns},
		{"history", "nope", "-n", ns},
		{"approve", "nope", "-n", ns, "--yes"},
		{"rollback", "nope", "-n", ns, "--yes"},
	} {
		t.Run(args[0], func(t *testing.T) {
			r := ksync(t, args...)
			r.expect(t, exitFailed)
			if want := "ksync: Application unknown/nope not found\n"; r.stderr != want {
				t.Errorf("stderr %q, want %q", r.stderr, want)
			}
		})
	}
}
