package printers

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// golden compares got with testdata/<name>.golden, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run go test -update after checking it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

var (
	now     = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	ago     = func(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }
	ansi    = regexp.MustCompile("\x1b\\[[0-9;]*m")
	commit1 = "0123456789abcdef0123456789abcdef01234567"
	digest1 = "sha256:" + strings.Repeat("ab", 32)
)

// at is a time of the test day, 2026-07-01, in UTC.
func at(hhmm string) *metav1.Time {
	t, err := time.Parse(time.DateTime, "2026-07-01 "+hhmm+":00")
	if err != nil {
		panic(err)
	}
	v := metav1.NewTime(t)
	return &v
}

func applications() []syncv1.Application {
	return []syncv1.Application{
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: "payments", Name: "api", CreationTimestamp: ago(26 * time.Hour)},
			Spec: syncv1.ApplicationSpec{
				Source: syncv1.ApplicationSource{RepositoryRef: syncv1.LocalObjectReference{Name: "platform"}, Path: "envs/prod"},
				Sync:   syncv1.SyncPolicy{Automatic: true},
			},
			Status: syncv1.ApplicationStatus{
				Sync: syncv1.SyncStateSynced, Health: syncv1.HealthHealthy, Phase: syncv1.PhaseHealthy,
				DesiredRevision: "api-5f2c9a01be", DeployedRevision: "api-5f2c9a01be",
			},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: "payments", Name: "worker-with-a-long-name", CreationTimestamp: ago(90 * time.Second)},
			Spec: syncv1.ApplicationSpec{
				Source: syncv1.ApplicationSource{RepositoryRef: syncv1.LocalObjectReference{Name: "platform"}},
			},
			Status: syncv1.ApplicationStatus{
				Sync: syncv1.SyncStateOutOfSync, Health: syncv1.HealthDegraded, Phase: syncv1.PhaseAwaitingApproval,
				DesiredRevision: "worker-with-a-long-name-77aa01c3d2", DeployedRevision: "worker-with-a-long-name-0c1d2e3f4a",
			},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "site", CreationTimestamp: ago(5 * time.Minute),
				Labels: map[string]string{syncv1.ShardLabel: "tenant-a"}},
			Spec: syncv1.ApplicationSpec{
				Source: syncv1.ApplicationSource{RepositoryRef: syncv1.LocalObjectReference{Name: "web"}, Path: "site"},
			},
		},
	}
}

func TestApplications_TablesMatchGolden(t *testing.T) {
	cases := []struct {
		name string
		opts Options
	}{
		{"apps", Options{}},
		{"apps-all-namespaces", Options{AllNamespaces: true}},
		{"apps-wide", Options{Wide: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Now = now
			var out bytes.Buffer
			if err := Applications(&out, applications(), tc.opts); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, out.Bytes())
		})
	}
}

func repositories() []syncv1.Repository {
	return []syncv1.Repository{
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: "payments", Name: "platform", CreationTimestamp: ago(72 * time.Hour)},
			Spec:       syncv1.RepositorySpec{Git: syncv1.GitSource{URL: "https://git.example.com/platform.git", Revision: "main"}},
			Status: syncv1.RepositoryStatus{
				Conditions: []metav1.Condition{{Type: syncv1.ConditionReady, Status: metav1.ConditionTrue, Reason: syncv1.ReasonSucceeded, Message: "fetched refs/heads/main"}},
				Artifact:   &syncv1.Artifact{Revision: "refs/heads/main", Commit: commit1, FetchedAt: ago(40 * time.Second)},
			},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: "payments", Name: "private", CreationTimestamp: ago(10 * time.Minute)},
			Spec:       syncv1.RepositorySpec{Git: syncv1.GitSource{URL: "ssh://git@git.example.com/private.git", Revision: "refs/tags/v1.2.0"}},
			Status: syncv1.RepositoryStatus{
				Conditions: []metav1.Condition{{Type: syncv1.ConditionReady, Status: metav1.ConditionFalse, Reason: syncv1.ReasonCredentialsRefused, Message: "Secret payments/git-creds:\nauthentication refused"}},
			},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: "payments", Name: "new", CreationTimestamp: ago(3 * time.Second)},
			Spec:       syncv1.RepositorySpec{Git: syncv1.GitSource{URL: "https://git.example.com/new.git", Revision: "main"}},
		},
	}
}

func TestRepositories_TablesMatchGolden(t *testing.T) {
	cases := []struct {
		name string
		opts Options
	}{
		{"repos", Options{}},
		{"repos-wide-all-namespaces", Options{Wide: true, AllNamespaces: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Now = now
			var out bytes.Buffer
			if err := Repositories(&out, repositories(), tc.opts); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, out.Bytes())
		})
	}
}

func history() []syncv1.HistoryEntry {
	return []syncv1.HistoryEntry{
		{
			Revision: "api-77aa01c3d2", SourceCommit: commit1, PlanDigest: digest1, Result: syncv1.PhaseFailed,
			Reason: syncv1.ReasonHookFailed, StartedAt: at("11:00"), FinishedAt: at("11:04"),
			Approval: &syncv1.ApprovalRecord{Revision: "api-77aa01c3d2", By: "alice@example.com", At: *at("10:58"), Digest: digest1},
		},
		{
			Revision: "api-5f2c9a01be", Result: syncv1.PhaseHealthy, StartedAt: at("09:30"), FinishedAt: at("09:31"), Rollback: true,
			Approval: &syncv1.ApprovalRecord{Revision: "api-5f2c9a01be", By: "system:serviceaccount:ops:bot", At: *at("09:29"), Digest: "sha256:" + strings.Repeat("cd", 32), Rollback: true},
		},
		{Revision: "api-0c1d2e3f4a", Result: syncv1.PhaseApplying, StartedAt: at("08:00"),
			Drift: `1 object(s) drifted: ConfigMap shop/settings; edited by hand: ConfigMap shop/settings: .data.color from field manager "kubectl-patch"`},
	}
}

func TestHistory_TablesMatchGolden(t *testing.T) {
	cases := []struct {
		name string
		opts Options
	}{
		{"history", Options{}},
		{"history-wide", Options{Wide: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Now = now
			var out bytes.Buffer
			if err := History(&out, history(), tc.opts); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, out.Bytes())
		})
	}
}

const deploymentDiff = `--- live
+++ desired
@@ -5,7 +5,7 @@
   name: api
   namespace: payments
 spec:
-  replicas: 2
+  replicas: 3
   selector:
     matchLabels:
       app: api
`

const redactedSecretDiff = `--- live
+++ desired
@@ -1,5 +1,6 @@
 apiVersion: v1
 data:
-  password: '*** (old value)'
+  password: '*** (new value)'
+  token: '***'
   username: '*** (unchanged)'
 kind: Secret
`

func plan() syncv1.Plan {
	return syncv1.Plan{
		Digest:    digest1,
		PlannedAt: *at("11:59"),
		Summary:   syncv1.PlanSummary{Create: 1, Update: 2, Delete: 1, Unchanged: 3},
		Entries: []syncv1.PlanEntry{
			{ObjectRef: syncv1.ObjectRef{Version: "v1", Kind: "Namespace", Name: "payments"}, Action: syncv1.ActionUnchanged, Wave: -1},
			{ObjectRef: syncv1.ObjectRef{Version: "v1", Kind: "Secret", Namespace: "payments", Name: "db"}, Action: syncv1.ActionUpdate, Diff: redactedSecretDiff},
			{ObjectRef: syncv1.ObjectRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "payments", Name: "api"}, Action: syncv1.ActionUpdate, Wave: 1, Diff: deploymentDiff, DiffTruncated: true},
			{ObjectRef: syncv1.ObjectRef{Group: "batch", Version: "v1", Kind: "Job", Namespace: "payments", Name: "migrate"}, Action: syncv1.ActionCreate, Hook: syncv1.HookPreSync},
		},
		Truncated: true,
	}
}

func TestPlan_MatchesGolden(t *testing.T) {
	var out bytes.Buffer
	p, hidden := ConcealSecretValues(plan())
	if hidden != 0 {
		t.Fatalf("ConcealSecretValues hid %d values of a redacted plan", hidden)
	}
	if err := Plan(&out, "api-77aa01c3d2", p, Options{Now: now}); err != nil {
		t.Fatal(err)
	}
	golden(t, "plan", out.Bytes())
}

func TestPlan_EmptyPlanPrintsOnlyTheHeader(t *testing.T) {
	var out bytes.Buffer
	if err := Plan(&out, "api-77aa01c3d2", syncv1.Plan{Digest: digest1}, Options{}); err != nil {
		t.Fatal(err)
	}
	want := "Revision:  api-77aa01c3d2\nDigest:    " + digest1 + "\nSummary:   0 to create, 0 to update, 0 to delete, 0 unchanged\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

// TestTables_ColorKeepsAlignment holds that colours only add escapes: with
// them stripped, coloured output is the plain output byte for byte.
func TestTables_ColorKeepsAlignment(t *testing.T) {
	render := map[string]func(*bytes.Buffer, Options) error{
		"apps":    func(b *bytes.Buffer, o Options) error { return Applications(b, applications(), o) },
		"repos":   func(b *bytes.Buffer, o Options) error { return Repositories(b, repositories(), o) },
		"history": func(b *bytes.Buffer, o Options) error { return History(b, history(), o) },
		"plan":    func(b *bytes.Buffer, o Options) error { return Plan(b, "api-77aa01c3d2", plan(), o) },
	}
	for name, f := range render {
		t.Run(name, func(t *testing.T) {
			var plain, colored bytes.Buffer
			if err := f(&plain, Options{Now: now, Wide: true, AllNamespaces: true}); err != nil {
				t.Fatal(err)
			}
			if err := f(&colored, Options{Now: now, Wide: true, AllNamespaces: true, Color: true}); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(colored.String(), string(Green)) {
				t.Errorf("coloured output has no colour:\n%s", colored.String())
			}
			if got := ansi.ReplaceAllString(colored.String(), ""); got != plain.String() {
				t.Errorf("coloured output, escapes stripped, differs from plain:\n%s\nplain:\n%s", got, plain.String())
			}
		})
	}
}

func TestColorEnabled_OnlyOnATerminalWithoutNoColor(t *testing.T) {
	unset := func(string) (string, bool) { return "", false }
	set := func(k string) (string, bool) { return "", k == "NO_COLOR" }
	file, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	cases := []struct {
		name      string
		w         io.Writer
		lookupEnv func(string) (string, bool)
	}{
		{"buffer is not a terminal", &bytes.Buffer{}, unset},
		{"regular file is not a terminal", file, unset},
		{"NO_COLOR set, even empty, turns colour off", os.Stdout, set},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if ColorEnabled(tc.w, tc.lookupEnv) {
				t.Error("colour enabled")
			}
		})
	}
}

func TestSanitize_ReplacesControlCharacters(t *testing.T) {
	got := Sanitize("ok\x1b[2J\tmsg\nnext\r")
	if want := "ok [2J msg next "; got != want {
		t.Errorf("Sanitize = %q, want %q", got, want)
	}
}

func TestFormat_ShortFormsAndAge(t *testing.T) {
	cases := []struct{ name, got, want string }{
		{"commit is cut to 12", ShortCommit(commit1), "0123456789ab"},
		{"short commit stays", ShortCommit("abc"), "abc"},
		{"digest keeps algorithm and 12 hex", ShortDigest(digest1), "sha256:abababababab"},
		{"digest without algorithm stays", ShortDigest("abc"), "abc"},
		{"age in minutes", Age(ago(5*time.Minute), now), "5m"},
		{"age in days and hours", Age(ago(26*time.Hour), now), "26h"},
		{"zero time has unknown age", Age(metav1.Time{}, now), "<unknown>"},
		{"nil timestamp is empty", Timestamp(nil), ""},
		{"timestamp is RFC 3339 UTC", Timestamp(at("09:30")), "2026-07-01T09:30:00Z"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %q, want %q", tc.got, tc.want)
			}
		})
	}
}
