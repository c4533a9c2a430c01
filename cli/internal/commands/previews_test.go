package commands

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

func TestPreviews_ListsPreviewsAndTheirPlans(t *testing.T) {
	ns := namespace(t, "previews", nil)
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }
	closedAt := ago(10 * time.Minute)
	repo := previewRepository(t, ns, &syncv1.PreviewsSpec{PullRequests: syncv1.PreviewProviderGitHub, Branches: []string{"preview/*"}}, nil)
	repo.Status.Previews = []syncv1.PreviewStatus{
		{Name: "pr-12", Ref: "refs/pull/12/head", Number: 12, Branch: "new-image", Commit: previewCommit, State: syncv1.PreviewRendered,
			Applications: []string{"api", "web"}, RequestedAt: ago(5 * time.Minute)},
		{Name: "pr-13", Ref: "refs/pull/13/head", Number: 13, Fork: true, State: syncv1.PreviewRefused,
			Message: "pull request 13 comes from a fork; set spec.previews.forks: true to preview forks", RequestedAt: ago(time.Hour)},
		{Name: "pr-9", Ref: "refs/pull/9/head", Number: 9, Commit: previewCommit, State: syncv1.PreviewClosed,
			RequestedAt: ago(2 * time.Hour), ClosedAt: &closedAt},
	}
	if err := k8s.Status().Update(t.Context(), repo); err != nil {
		t.Fatal(err)
	}
	for _, rev := range []*syncv1.Revision{
		previewRevision(ns, "api", "pr-12", "api-pr-12", syncv1.RevisionStatus{Phase: syncv1.PhasePlanned, Plan: secretPlan()}),
		previewRevision(ns, "web", "pr-12", "web-pr-12", syncv1.RevisionStatus{Phase: syncv1.PhaseFailed, Conditions: []metav1.Condition{{
			Type: syncv1.ConditionPlanned, Status: metav1.ConditionFalse, Reason: "Forbidden",
			Message: "dry-run as system:serviceaccount:previews:web: deployments.apps is forbidden", LastTransitionTime: metav1.Now(),
		}}}),
		previewRevision(ns, "api", "pr-9", "api-pr-9", syncv1.RevisionStatus{}),
	} {
		storeRevision(t, rev)
	}
	createRevision(t, ns, "api", "api-1", syncv1.RevisionStatus{Phase: syncv1.PhaseHealthy})

	for _, tc := range []struct {
		name, golden string
		args         []string
	}{
		{"of a namespace", "previews", []string{"previews", "-n", ns}},
		{"of one Repository, wide", "previews-wide", []string{"previews", "platform", "-n", ns, "-o", "wide"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ksyncAt(t, now, tc.args...)
			r.expect(t, 0)
			golden(t, tc.golden, r.stdout)
		})
	}
}

func TestPreviews_SaysWhenThereAreNone(t *testing.T) {
	ns := namespace(t, "previews-none", nil)
	previewRepository(t, ns, &syncv1.PreviewsSpec{PullRequests: syncv1.PreviewProviderGitLab}, nil)
	for _, tc := range []struct {
		args       []string
		code       int
		wantStderr string
	}{
		{[]string{"previews", "-n", ns}, 0, "No previews found in namespace previews-none.\n"},
		{[]string{"previews", "platform", "-n", ns}, 0, "No previews found in Repository previews-none/platform.\n"},
		{[]string{"previews", "missing", "-n", ns}, exitFailed, "ksync: Repository previews-none/missing not found\n"},
		{[]string{"previews", "platform", "-A"}, exitUsage, "ksync: previews takes a Repository name or -A, not both\n"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := ksync(t, tc.args...)
			r.expect(t, tc.code)
			if r.stdout != "" || r.stderr != tc.wantStderr {
				t.Errorf("stdout %q stderr %q, want stderr %q", r.stdout, r.stderr, tc.wantStderr)
			}
		})
	}
}

// ksyncAt runs ksync with a fixed clock, for tables with ages.
func ksyncAt(t *testing.T, now time.Time, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(append([]string{"ksync"}, withKubeconfig(t, args)...), &env{
		in: strings.NewReader(""), out: &out, errOut: &errOut, now: func() time.Time { return now }, lookupEnv: os.LookupEnv,
	})
	return result{code, out.String(), errOut.String()}
}
