package receiver

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// Head commits of the pull and merge requests of the tests.
const (
	commitA = "0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c"
	commitB = "da1560886d4f094c3e6c9ef40349f7d38b5d27d7"
)

// steppedClock is a receiver clock the test moves by hand.
type steppedClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *steppedClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *steppedClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// previewRequests reads the preview request annotations of Repository name
// as admin, by preview name; an annotation the source-controller would
// refuse fails the test.
func (f *fixture) previewRequests(name string) map[string]syncv1.PreviewRequest {
	f.t.Helper()
	repo := &syncv1.Repository{}
	must(f.t, admin.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: name}, repo))
	out := map[string]syncv1.PreviewRequest{}
	for k, v := range repo.Annotations {
		n, req, ok, err := syncv1.ParsePreviewRequest(k, v)
		if err != nil {
			f.t.Fatalf("Repository %s: %v", name, err)
		}
		if ok {
			req.At.Time = req.At.UTC()
			out[n] = req
		}
	}
	return out
}

// TestReceiver_PullRequestEventsStampPreviewRequests sends GitHub
// pull_request events and GitLab Merge Request Hooks in turn: each one a
// Repository previews stamps preview.sync.kuvryn.io/pr-<n> or mr-<n> with
// its number, head commit, branch, fork and closed, a later one replacing
// the earlier; actions that change no preview, Repositories that preview
// no pull requests or another host's, are ignored; a bad number or commit
// is bad_request, another repository's event repository_mismatch. A push
// in between keeps the preview requests, and a pull request event keeps
// the push's stamp.
func TestReceiver_PullRequestEventsStampPreviewRequests(t *testing.T) {
	clock := &steppedClock{t: time.Date(2026, 12, 7, 18, 0, 0, 0, time.UTC)}
	f := start(t, fixtureOptions{now: clock.now})
	f.secret("hook", "s3cret")
	f.previewRepository("github", "https://github.com/acme/platform", "hook", &syncv1.PreviewsSpec{PullRequests: syncv1.PreviewProviderGitHub})
	f.previewRepository("gitlab", "git@gitlab.example.com:acme/platform.git", "hook", &syncv1.PreviewsSpec{PullRequests: syncv1.PreviewProviderGitLab})
	f.previewRepository("branches", "https://github.com/acme/platform", "hook", &syncv1.PreviewsSpec{Branches: []string{"preview/*"}})
	f.repository("no-previews", "https://github.com/acme/platform", "hook")

	github := func(action string, n int, sha, head string) (map[string]string, []byte) {
		body := githubPullRequest("acme/platform", action, n, sha, head)
		return map[string]string{"X-GitHub-Event": "pull_request", "X-Hub-Signature-256": sign(body, "s3cret")}, body
	}
	gitlab := func(action string, iid int, sha string, source int) (map[string]string, []byte) {
		return map[string]string{"X-Gitlab-Event": "Merge Request Hook", "X-Gitlab-Token": "s3cret"},
			gitlabMergeRequest("acme/platform", action, iid, sha, source, 14)
	}
	push := func() (map[string]string, []byte) {
		body := githubPush("acme/platform")
		return map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": sign(body, "s3cret")}, body
	}
	req := func(n int32, sha, branch string, fork, closed bool) *syncv1.PreviewRequest {
		return &syncv1.PreviewRequest{Number: n, Commit: sha, Branch: branch, Fork: fork, Closed: closed}
	}
	const ghBranch, glBranch = "feature/new-image", "ms-viewport"
	cases := []struct {
		name    string
		repo    string
		request func() (map[string]string, []byte)
		result  string
		// preview is the preview the step stamps, and want its request.
		preview string
		want    *syncv1.PreviewRequest
	}{
		{"GitHub opened", "github", func() (map[string]string, []byte) { return github("opened", 12, commitA, "acme/platform") },
			"accepted", "pr-12", req(12, commitA, ghBranch, false, false)},
		{"GitHub synchronize", "github", func() (map[string]string, []byte) { return github("synchronize", 12, commitB, "acme/platform") },
			"accepted", "pr-12", req(12, commitB, ghBranch, false, false)},
		{"GitHub labeled", "github", func() (map[string]string, []byte) { return github("labeled", 12, commitA, "acme/platform") },
			"ignored", "", nil},
		{"GitHub edited", "github", func() (map[string]string, []byte) { return github("edited", 12, commitA, "acme/platform") },
			"ignored", "", nil},
		{"GitHub closed", "github", func() (map[string]string, []byte) { return github("closed", 12, commitB, "acme/platform") },
			"accepted", "pr-12", req(12, commitB, ghBranch, false, true)},
		{"GitHub reopened", "github", func() (map[string]string, []byte) { return github("reopened", 12, commitB, "acme/platform") },
			"accepted", "pr-12", req(12, commitB, ghBranch, false, false)},
		{"GitHub opened from a fork", "github", func() (map[string]string, []byte) { return github("opened", 13, commitA, "octocat/platform") },
			"accepted", "pr-13", req(13, commitA, ghBranch, true, false)},
		{"GitHub closed from a deleted fork", "github", func() (map[string]string, []byte) { return github("closed", 13, commitA, "") },
			"accepted", "pr-13", req(13, commitA, ghBranch, true, true)},
		{"push after pull requests", "github", push, "accepted", "", nil},
		{"GitHub opened after a push", "github", func() (map[string]string, []byte) { return github("opened", 14, commitA, "acme/platform") },
			"accepted", "pr-14", req(14, commitA, ghBranch, false, false)},
		{"GitHub short commit", "github", func() (map[string]string, []byte) { return github("synchronize", 14, commitB[:12], "acme/platform") },
			"bad_request", "", nil},
		{"GitHub number zero", "github", func() (map[string]string, []byte) { return github("opened", 0, commitB, "acme/platform") },
			"bad_request", "", nil},
		{"GitHub negative number", "github", func() (map[string]string, []byte) { return github("opened", -14, commitB, "acme/platform") },
			"bad_request", "", nil},
		{"GitHub event that is not JSON", "github", func() (map[string]string, []byte) {
			h, b := github("opened", 14, commitB, "acme/platform")
			b = b[:len(b)/2]
			h["X-Hub-Signature-256"] = sign(b, "s3cret")
			return h, b
		}, "bad_request", "", nil},
		{"GitHub pull request of another repository", "github", func() (map[string]string, []byte) {
			body := githubPullRequest("acme/other", "opened", 15, commitA, "acme/other")
			return map[string]string{"X-GitHub-Event": "pull_request", "X-Hub-Signature-256": sign(body, "s3cret")}, body
		}, "repository_mismatch", "", nil},
		{"GitLab merge request to a GitHub previewer", "github", func() (map[string]string, []byte) { return gitlab("open", 4, commitA, 14) },
			"ignored", "", nil},
		{"GitLab open", "gitlab", func() (map[string]string, []byte) { return gitlab("open", 4, commitA, 14) },
			"accepted", "mr-4", req(4, commitA, glBranch, false, false)},
		{"GitLab update", "gitlab", func() (map[string]string, []byte) { return gitlab("update", 4, commitB, 14) },
			"accepted", "mr-4", req(4, commitB, glBranch, false, false)},
		{"GitLab approved", "gitlab", func() (map[string]string, []byte) { return gitlab("approved", 4, commitA, 14) },
			"ignored", "", nil},
		{"GitLab merge", "gitlab", func() (map[string]string, []byte) { return gitlab("merge", 4, commitB, 14) },
			"accepted", "mr-4", req(4, commitB, glBranch, false, true)},
		{"GitLab reopen", "gitlab", func() (map[string]string, []byte) { return gitlab("reopen", 5, commitA, 14) },
			"accepted", "mr-5", req(5, commitA, glBranch, false, false)},
		{"GitLab close", "gitlab", func() (map[string]string, []byte) { return gitlab("close", 5, commitA, 14) },
			"accepted", "mr-5", req(5, commitA, glBranch, false, true)},
		{"GitLab open from another project", "gitlab", func() (map[string]string, []byte) { return gitlab("open", 6, commitA, 15) },
			"accepted", "mr-6", req(6, commitA, glBranch, true, false)},
		{"GitLab iid zero", "gitlab", func() (map[string]string, []byte) { return gitlab("open", 0, commitA, 14) },
			"bad_request", "", nil},
		{"GitLab commit in upper case", "gitlab", func() (map[string]string, []byte) { return gitlab("update", 6, strings.ToUpper(commitA), 14) },
			"bad_request", "", nil},
		{"GitHub pull request to a GitLab previewer", "gitlab", func() (map[string]string, []byte) { return github("opened", 12, commitA, "acme/platform") },
			"ignored", "", nil},
		{"GitHub opened, previews of branches only", "branches", func() (map[string]string, []byte) { return github("opened", 12, commitA, "acme/platform") },
			"ignored", "", nil},
		{"GitHub opened, no previews", "no-previews", func() (map[string]string, []byte) { return github("opened", 12, commitA, "acme/platform") },
			"ignored", "", nil},
		{"GitLab open, no previews", "no-previews", func() (map[string]string, []byte) { return gitlab("open", 4, commitA, 14) },
			"ignored", "", nil},
	}
	want := map[string]map[string]syncv1.PreviewRequest{}
	counts := map[string]int{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Full rate-limit buckets, and a new time for each stamp.
			clock.add(11 * time.Second)
			stampBefore := f.annotation(&syncv1.Repository{}, c.repo, syncv1.ReconcileRequestedAtAnnotation)
			header, body := c.request()
			got := f.post("/hooks/"+f.ns+"/"+c.repo, header, body)
			counts[c.result]++
			if answer := responses[result(c.result)]; got.status != answer.status || got.body != answer.body {
				t.Fatalf("%d %q, want %d %q (%s)", got.status, got.body, answer.status, answer.body, c.result)
			}
			if want[c.repo] == nil {
				want[c.repo] = map[string]syncv1.PreviewRequest{}
			}
			if c.want != nil {
				r := *c.want
				r.At.Time = clock.now()
				want[c.repo][c.preview] = r
			}
			if got := f.previewRequests(c.repo); !equalRequests(got, want[c.repo]) {
				t.Fatalf("preview requests %+v, want %+v", got, want[c.repo])
			}
			stampAfter := f.annotation(&syncv1.Repository{}, c.repo, syncv1.ReconcileRequestedAtAnnotation)
			if pushed := c.name == "push after pull requests"; (stampAfter != stampBefore) != pushed {
				t.Fatalf("%s went from %q to %q", syncv1.ReconcileRequestedAtAnnotation, stampBefore, stampAfter)
			}
		})
	}
	if got := f.counts(); got["accepted"] != counts["accepted"] || got["ignored"] != counts["ignored"] ||
		got["bad_request"] != counts["bad_request"] || got["repository_mismatch"] != counts["repository_mismatch"] {
		t.Errorf("counts %v, want %v", got, counts)
	}
}

func equalRequests(a, b map[string]syncv1.PreviewRequest) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || v.Number != w.Number || v.Commit != w.Commit || v.Branch != w.Branch || v.Fork != w.Fork ||
			v.Closed != w.Closed || !v.At.Equal(&w.At) {
			return false
		}
	}
	return true
}
