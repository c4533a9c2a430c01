package commands

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

const previewCommit = "0123456789abcdef0123456789abcdef01234567"

// previewRepository creates Repository "platform" in ns with previews.
func previewRepository(t *testing.T, ns string, previews *syncv1.PreviewsSpec, annotations map[string]string) *syncv1.Repository {
	t.Helper()
	repo := &syncv1.Repository{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "platform", Annotations: annotations},
		Spec: syncv1.RepositorySpec{
			Git:      syncv1.GitSource{URL: "https://github.com/example/platform", Revision: "main"},
			Previews: previews,
		},
	}
	if err := k8s.Create(t.Context(), repo); err != nil {
		t.Fatal(err)
	}
	return repo
}

// controllers stands in for the source- and sync-controllers: once the
// preview's request annotation appears on the Repository, it writes
// status.previews with the request's time and the given state, and creates
// the given preview Revisions with their status. It returns the request
// it answered.
func controllers(t *testing.T, ns, preview string, state syncv1.PreviewStatus, revs []*syncv1.Revision) <-chan syncv1.PreviewRequest {
	t.Helper()
	answered := make(chan syncv1.PreviewRequest, 1)
	// Requests older than the test were not written by ksync.
	since := time.Now().Add(-time.Second)
	go func() {
		defer close(answered)
		key := syncv1.PreviewRequestAnnotation(preview)
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			repo := &syncv1.Repository{}
			if err := k8s.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "platform"}, repo); err != nil {
				t.Errorf("reading Repository: %v", err)
				return
			}
			value, ok := repo.Annotations[key]
			if !ok {
				continue
			}
			_, req, _, err := syncv1.ParsePreviewRequest(key, value)
			if err != nil {
				t.Errorf("ksync wrote a request the source-controller cannot read: %v", err)
				return
			}
			if req.At.Time.Before(since) {
				continue
			}
			for _, rev := range revs {
				status := rev.Status
				if err := k8s.Create(t.Context(), rev); err != nil {
					t.Errorf("creating Revision: %v", err)
					return
				}
				rev.Status = status
				if err := k8s.Status().Update(t.Context(), rev); err != nil {
					t.Errorf("writing Revision status: %v", err)
					return
				}
			}
			p := state
			p.Name, p.RequestedAt = preview, req.At
			repo.Status.Previews = []syncv1.PreviewStatus{p}
			if err := k8s.Status().Update(t.Context(), repo); err != nil {
				t.Errorf("writing Repository status: %v", err)
				return
			}
			answered <- req
			return
		}
		t.Errorf("ksync wrote no annotation %s", key)
	}()
	return answered
}

func previewRevision(ns, app, preview, name string, status syncv1.RevisionStatus) *syncv1.Revision {
	return &syncv1.Revision{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{
			syncv1.ApplicationLabel: app, syncv1.PreviewLabel: preview, syncv1.RepositoryLabel: "platform",
		}},
		Spec: syncv1.RevisionSpec{
			ApplicationName: app,
			DesiredState:    syncv1.DesiredStateRef{SecretName: name, Digest: digest("e"), Objects: 1},
			Preview: &syncv1.RevisionPreview{
				Name: preview, Repository: "platform", Ref: "refs/pull/12/head", Commit: previewCommit,
				Withheld: []string{"envs/api/secret.enc.yaml: SOPS-encrypted, not decrypted (spec.previews.decrypt is off)"},
			},
		},
		Status: status,
	}
}

func TestPlanRef_RequestsAPreviewAndPrintsItsPlan(t *testing.T) {
	for _, format := range []string{outputTable, outputJSON} {
		t.Run(format, func(t *testing.T) {
			ns := namespace(t, "plan-ref-"+format, nil)
			createApplication(t, application(ns, "api"))
			previewRepository(t, ns, &syncv1.PreviewsSpec{PullRequests: syncv1.PreviewProviderGitHub}, nil)
			planned := syncv1.RevisionStatus{Phase: syncv1.PhasePlanned, Plan: secretPlan()}
			answered := controllers(t, ns, "pr-12",
				syncv1.PreviewStatus{Ref: "refs/pull/12/head", Number: 12, Commit: previewCommit, State: syncv1.PreviewRendered, Applications: []string{"api"}},
				[]*syncv1.Revision{
					// An older commit's Revision, left from before, is not the result.
					previewRevision(ns, "api", "pr-12", "api-pr-12-old", syncv1.RevisionStatus{Phase: syncv1.PhaseFailed}),
					previewRevision(ns, "api", "pr-12", "api-pr-12-0123456789", planned),
				})
			r := ksync(t, "plan", "api", "--ref", "12", "-n", ns, "-o", format)
			r.expect(t, 0)
			req := <-answered
			if req.Number != 12 || req.Fork || req.Commit != "" || req.At.IsZero() {
				t.Errorf("request %+v", req)
			}
			if strings.Contains(r.stdout, secretValue) {
				t.Fatalf("plan --ref shows a Secret value:\n%s", r.stdout)
			}
			if format == outputTable {
				golden(t, "plan-ref", r.stdout)
				return
			}
			var got planExport
			if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
				t.Fatalf("-o json is not JSON: %v\n%s", err, r.stdout)
			}
			if got.Revision != "api-pr-12-0123456789" || got.Phase != syncv1.PhasePlanned || got.Preview == nil ||
				got.Preview.Name != "pr-12" || got.Preview.Commit != previewCommit || len(got.Plan.Entries) != 3 {
				t.Errorf("export %+v", got)
			}
		})
	}
}

func TestPlanRef_PrintsAFailedPlanAndFails(t *testing.T) {
	ns := namespace(t, "plan-ref-failed", nil)
	createApplication(t, application(ns, "api"))
	previewRepository(t, ns, &syncv1.PreviewsSpec{PullRequests: syncv1.PreviewProviderGitLab, Branches: []string{"preview/*"}}, nil)
	failed := syncv1.RevisionStatus{Phase: syncv1.PhaseFailed, Conditions: []metav1.Condition{{
		Type: syncv1.ConditionPlanned, Status: metav1.ConditionFalse, Reason: syncv1.ReasonRenderFailed,
		Message: "kustomize build envs/api: missing resource deployment.yaml", LastTransitionTime: metav1.Now(),
	}}}
	name := syncv1.BranchPreviewName("preview/new-image")
	rev := previewRevision(ns, "api", name, "api-"+name, failed)
	rev.Spec.Preview.Ref = "refs/heads/preview/new-image"
	answered := controllers(t, ns, name,
		syncv1.PreviewStatus{Ref: "refs/heads/preview/new-image", Branch: "preview/new-image", Commit: previewCommit, State: syncv1.PreviewRendered, Applications: []string{"api"}},
		[]*syncv1.Revision{rev})

	r := ksync(t, "plan", "api", "--ref", "preview/new-image", "-n", ns)
	r.expect(t, exitFailed)
	if req := <-answered; req.Branch != "preview/new-image" || req.Number != 0 {
		t.Errorf("request %+v", req)
	}
	want := "Preview:   " + name + " (refs/heads/preview/new-image)\n" +
		"Commit:    " + previewCommit + "\n" +
		"Withheld:  envs/api/secret.enc.yaml: SOPS-encrypted, not decrypted (spec.previews.decrypt is off)\n" +
		"Revision:  api-" + name + " (Failed)\n" +
		"Failure:   Planned RenderFailed: kustomize build envs/api: missing resource deployment.yaml\n" +
		"Diagnosis: none (status.diagnosis is empty: nothing was found wrong, or the Revision was not diagnosed)\n"
	if r.stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", r.stdout, want)
	}
	if !strings.HasSuffix(r.stderr, "ksync: the plan of preview "+name+" failed for Application plan-ref-failed/api (Revision api-"+name+")\n") {
		t.Errorf("stderr %q", r.stderr)
	}
}

func TestPlanRef_FailsSayingWhy(t *testing.T) {
	tests := []struct {
		name        string
		previews    *syncv1.PreviewsSpec
		annotations map[string]string
		ref         string
		state       *syncv1.PreviewStatus
		code        int
		timeout     string
		want        string
		wantFork    bool
	}{
		{name: "previews off", ref: "12", code: exitFailed,
			want: "ksync: Repository %s/platform does not preview: set spec.previews.pullRequests (github or gitlab) to preview pull or merge requests, or spec.previews.branches to preview branches\n"},
		{name: "no pull requests", previews: &syncv1.PreviewsSpec{Branches: []string{"*"}}, ref: "12", code: exitFailed,
			want: "ksync: Repository %s/platform does not preview pull requests: set spec.previews.pullRequests to github or gitlab\n"},
		{name: "bad branch", previews: &syncv1.PreviewsSpec{Branches: []string{"*"}}, ref: "a..b", code: exitUsage,
			want: "ksync: --ref \"a..b\": annotation preview.sync.kuvryn.io/" + syncv1.BranchPreviewName("a..b") + ": branch \"a..b\" is not a Git branch name\n"},
		{name: "refused fork", previews: &syncv1.PreviewsSpec{PullRequests: syncv1.PreviewProviderGitHub},
			annotations: map[string]string{syncv1.PreviewRequestAnnotation("pr-7"): `{"number":7,"branch":"fix","fork":true,"at":"2026-01-01T00:00:00Z"}`},
			ref:         "7", code: exitFailed, wantFork: true,
			state: &syncv1.PreviewStatus{Ref: "refs/pull/7/head", Number: 7, Fork: true, State: syncv1.PreviewRefused,
				Message: "pull request 7 comes from a fork; set spec.previews.forks: true to preview forks"},
			want: "ksync: preview pr-7 of Repository %s/platform was refused: pull request 7 comes from a fork; set spec.previews.forks: true to preview forks\n"},
		{name: "another app changed", previews: &syncv1.PreviewsSpec{PullRequests: syncv1.PreviewProviderGitHub}, ref: "7", code: exitFailed,
			state: &syncv1.PreviewStatus{Ref: "refs/pull/7/head", Number: 7, Commit: previewCommit, State: syncv1.PreviewRendered, Applications: []string{"web"}},
			want:  "ksync: preview pr-7 of Repository %s/platform at commit 0123456789ab changes nothing in Application api (status.previews lists the Applications it renders: web)\n"},
		{name: "no controller", previews: &syncv1.PreviewsSpec{PullRequests: syncv1.PreviewProviderGitHub}, ref: "7", code: exitFailed, timeout: "1s",
			want: "ksync: preview pr-7 of Repository %s/platform was not planned for Application api within 1s: the source-controller has not taken the request into status.previews: is it running?\n"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ns := namespace(t, "plan-ref-fails-"+string(rune('a'+i)), nil)
			createApplication(t, application(ns, "api"))
			previewRepository(t, ns, tc.previews, tc.annotations)
			var answered <-chan syncv1.PreviewRequest
			if tc.state != nil {
				answered = controllers(t, ns, "pr-7", *tc.state, nil)
			}
			timeout := tc.timeout
			if timeout == "" {
				timeout = "1m"
			}
			r := ksync(t, "plan", "api", "--ref", tc.ref, "--timeout", timeout, "-n", ns)
			r.expect(t, tc.code)
			if want := strings.ReplaceAll(tc.want, "%s", ns); !strings.HasSuffix(r.stderr, want) {
				t.Errorf("stderr %q, want it to end in %q", r.stderr, want)
			}
			if answered != nil {
				if req := <-answered; req.Fork != tc.wantFork {
					t.Errorf("request %+v: fork %v, want %v", req, req.Fork, tc.wantFork)
				}
			}
		})
	}
}
