package prpayload

import (
	"fmt"
	"strings"
	"testing"
	"time"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

const (
	headSHA = "0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c"
	mrSHA   = "da1560886d4f094c3e6c9ef40349f7d38b5d27d7"
)

// githubEvent is a pull_request event in the shape GitHub sends; headRepo
// is the head repository's JSON (null for a deleted fork).
func githubEvent(action string, number int, sha, headRepo string) string {
	return fmt.Sprintf(`{"action":%q,"number":%[2]d,"pull_request":{"url":"https://api.github.com/repos/acme/platform/pulls/%[2]d",
"id":279147437,"number":%[2]d,"state":"open","title":"Update the README",
"head":{"label":"octocat:feature","ref":"feature/new-image","sha":%[3]q,"repo":%[4]s},
"base":{"label":"acme:main","ref":"main","sha":"9049f1265b7d61be4a8904a9a27120d2064dab3b","repo":{"id":186853002,"full_name":"acme/platform"}},
"merged":false},"repository":{"full_name":"acme/platform","clone_url":"https://github.com/acme/platform.git"}}`,
		action, number, sha, headRepo)
}

// gitlabEvent is a Merge Request Hook in the shape GitLab sends.
func gitlabEvent(action string, iid int, sha string, source, target int) string {
	return fmt.Sprintf(`{"object_kind":"merge_request","event_type":"merge_request","user":{"username":"root"},
"project":{"id":%[5]d,"web_url":"https://gitlab.example.com/acme/platform","path_with_namespace":"acme/platform"},
"object_attributes":{"id":99,"iid":%[2]d,"target_branch":"main","source_branch":"ms-viewport","source_project_id":%[4]d,
"target_project_id":%[5]d,"state":"opened","merge_status":"unchecked",
"last_commit":{"id":%[3]q,"message":"fixed readme","timestamp":"2012-01-03T23:36:29+02:00"},
"action":%[1]q},"repository":{"name":"platform","url":"git@gitlab.example.com:acme/platform.git"}}`,
		action, iid, sha, source, target)
}

const sameRepo = `{"id":186853002,"full_name":"acme/platform"}`

// TestParse_ReadsTheActionsThatChangeAPreview reads GitHub pull_request
// events (opened, synchronize, reopened and closed act) and GitLab Merge
// Request Hooks (open, update, reopen, close and merge act): a head in
// another repository is a fork, other actions do not act, and a body that
// is not JSON of that shape is an error.
func TestParse_ReadsTheActionsThatChangeAPreview(t *testing.T) {
	type parser func([]byte) (Event, bool, error)
	var github, gitlab parser = GitHub, GitLab
	cases := []struct {
		name  string
		parse parser
		body  string
		want  Event
		acts  bool
		isErr bool
	}{
		{"GitHub opened", github, githubEvent("opened", 12, headSHA, sameRepo), Event{12, headSHA, "feature/new-image", false, false}, true, false},
		{"GitHub synchronize", github, githubEvent("synchronize", 12, headSHA, sameRepo), Event{12, headSHA, "feature/new-image", false, false}, true, false},
		{"GitHub reopened", github, githubEvent("reopened", 3, headSHA, sameRepo), Event{3, headSHA, "feature/new-image", false, false}, true, false},
		{"GitHub closed", github, githubEvent("closed", 12, headSHA, sameRepo), Event{12, headSHA, "feature/new-image", false, true}, true, false},
		{"GitHub from a fork", github, githubEvent("opened", 7, headSHA, `{"id":1,"full_name":"octocat/platform"}`), Event{7, headSHA, "feature/new-image", true, false}, true, false},
		{"GitHub from a deleted fork", github, githubEvent("closed", 7, headSHA, `null`), Event{7, headSHA, "feature/new-image", true, true}, true, false},
		{"GitHub edited", github, githubEvent("edited", 12, headSHA, sameRepo), Event{}, false, false},
		{"GitHub labeled", github, githubEvent("labeled", 12, headSHA, sameRepo), Event{}, false, false},
		{"GitHub no action", github, `{}`, Event{}, false, false},
		{"GitHub opened without a pull request", github, `{"action":"opened"}`, Event{Fork: true}, true, false},
		{"GitHub not JSON", github, `{"action":"opened",`, Event{}, false, true},
		{"GitHub number not a number", github, `{"action":"opened","pull_request":{"number":"12"}}`, Event{}, false, true},
		{"GitHub an array", github, `[]`, Event{}, false, true},
		{"GitLab open", gitlab, gitlabEvent("open", 4, mrSHA, 14, 14), Event{4, mrSHA, "ms-viewport", false, false}, true, false},
		{"GitLab update", gitlab, gitlabEvent("update", 4, mrSHA, 14, 14), Event{4, mrSHA, "ms-viewport", false, false}, true, false},
		{"GitLab reopen", gitlab, gitlabEvent("reopen", 4, mrSHA, 14, 14), Event{4, mrSHA, "ms-viewport", false, false}, true, false},
		{"GitLab close", gitlab, gitlabEvent("close", 4, mrSHA, 14, 14), Event{4, mrSHA, "ms-viewport", false, true}, true, false},
		{"GitLab merge", gitlab, gitlabEvent("merge", 4, mrSHA, 14, 14), Event{4, mrSHA, "ms-viewport", false, true}, true, false},
		{"GitLab from another project", gitlab, gitlabEvent("open", 4, mrSHA, 15, 14), Event{4, mrSHA, "ms-viewport", true, false}, true, false},
		{"GitLab approved", gitlab, gitlabEvent("approved", 4, mrSHA, 14, 14), Event{}, false, false},
		{"GitLab no attributes", gitlab, `{"object_kind":"merge_request"}`, Event{}, false, false},
		{"GitLab not JSON", gitlab, `{"object_attributes":`, Event{}, false, true},
		{"GitLab iid not a number", gitlab, `{"object_attributes":{"action":"open","iid":"4"}}`, Event{}, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, acts, err := c.parse([]byte(c.body))
			if (err != nil) != c.isErr || acts != c.acts || got != c.want {
				t.Fatalf("got %+v, %v, %v; want %+v, %v, error %v", got, acts, err, c.want, c.acts, c.isErr)
			}
		})
	}
}

// TestAnnotation_RefusesEventsThatAreNoRequest builds annotations: a
// positive number and a full commit hash make one the source-controller
// reads back, anything else is an error naming the field.
func TestAnnotation_RefusesEventsThatAreNoRequest(t *testing.T) {
	at := time.Date(2026, 12, 7, 18, 0, 0, 0, time.UTC)
	cases := []struct {
		name     string
		provider syncv1.PreviewProvider
		ev       Event
		key      string
		errHas   string
	}{
		{"pull request", syncv1.PreviewProviderGitHub, Event{12, headSHA, "feature/x", true, true}, "preview.sync.kuvryn.io/pr-12", ""},
		{"merge request", syncv1.PreviewProviderGitLab, Event{4, mrSHA, "ms-viewport", false, false}, "preview.sync.kuvryn.io/mr-4", ""},
		{"number zero", syncv1.PreviewProviderGitHub, Event{0, headSHA, "x", false, false}, "", "pull_request.number: number 0"},
		{"negative number", syncv1.PreviewProviderGitLab, Event{-3, headSHA, "x", false, false}, "", "object_attributes.iid: number -3"},
		{"number beyond 32 bits", syncv1.PreviewProviderGitHub, Event{1 << 31, headSHA, "x", false, false}, "", "number 2147483648"},
		{"no commit", syncv1.PreviewProviderGitHub, Event{12, "", "x", false, false}, "", "pull_request.head.sha: the head commit is missing"},
		{"short commit", syncv1.PreviewProviderGitHub, Event{12, headSHA[:7], "x", false, false}, "", "not a full commit hash"},
		{"upper-case commit", syncv1.PreviewProviderGitHub, Event{12, strings.ToUpper(headSHA), "x", false, false}, "", "not a full commit hash"},
		{"branch with a space", syncv1.PreviewProviderGitHub, Event{12, headSHA, "a b", false, false}, "", "not a Git branch name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			key, value, err := Annotation(c.provider, c.ev, at)
			if c.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), c.errHas) {
					t.Fatalf("Annotation() = %q, %q, %v; want an error with %q", key, value, err, c.errHas)
				}
				return
			}
			if err != nil || key != c.key {
				t.Fatalf("Annotation() = %q, %q, %v; want key %q", key, value, err, c.key)
			}
			_, req, _, err := syncv1.ParsePreviewRequest(key, value)
			if err != nil || int64(req.Number) != c.ev.Number || req.Commit != c.ev.Commit || req.Branch != c.ev.Branch ||
				req.Fork != c.ev.Fork || req.Closed != c.ev.Closed || !req.At.Time.Equal(at) {
				t.Fatalf("value %s reads back as %+v, %v", value, req, err)
			}
		})
	}
}
