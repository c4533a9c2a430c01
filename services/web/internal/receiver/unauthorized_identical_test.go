package receiver

import (
	"bytes"
	"net/http"
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestReceiver_UnauthorizedIsIdenticalWhateverIsMissing sends the same
// signed push, and the same signed pull request event to a Repository that
// previews pull requests, to an unknown Repository, with a bad signature,
// with a GitLab token that does not match, to a Repository without
// spec.webhook, one whose Secret is missing, and one whose Secret has no
// token: every response is 401 with the same status line, headers and
// body, byte for byte, so a caller cannot tell which Repositories exist
// nor which events they preview.
func TestReceiver_UnauthorizedIsIdenticalWhateverIsMissing(t *testing.T) {
	f := start(t, fixtureOptions{})
	f.webhookRepositories()
	f.previewRepository("previews", "https://github.com/acme/platform", "hook", &syncv1.PreviewsSpec{PullRequests: syncv1.PreviewProviderGitHub})

	var first []byte
	refused := 0
	for _, ev := range []struct {
		github, gitlab string
		to             string
		body           []byte
	}{
		{"push", "Push Hook", "platform", githubPush("acme/platform")},
		{"pull_request", "Merge Request Hook", "previews", githubPullRequest("acme/platform", "opened", 12, commitA, "acme/platform")},
	} {
		body := ev.body
		good := sign(body, "s3cret")
		github := func(sig string) map[string]string {
			return map[string]string{"X-GitHub-Event": ev.github, "X-Hub-Signature-256": sig}
		}
		cases := []struct {
			name   string
			path   string
			header map[string]string
		}{
			{"unknown Repository", "/hooks/" + f.ns + "/nope", github(good)},
			{"unknown namespace", "/hooks/no-such-namespace/" + ev.to, github(good)},
			{"bad signature", "/hooks/" + f.ns + "/" + ev.to, github(sign(body, "guess"))},
			{"signature not hex", "/hooks/" + f.ns + "/" + ev.to, github("sha256=zz")},
			{"signature without sha256=", "/hooks/" + f.ns + "/" + ev.to, github(good[len("sha256="):])},
			{"bad GitLab token", "/hooks/" + f.ns + "/" + ev.to, map[string]string{"X-Gitlab-Event": ev.gitlab, "X-Gitlab-Token": "guess"}},
			{"no credentials", "/hooks/" + f.ns + "/" + ev.to, map[string]string{"X-GitHub-Event": ev.github}},
			{"bearer token on a Repository", "/hooks/" + f.ns + "/" + ev.to, map[string]string{"Authorization": "Bearer s3cret"}},
			{"no spec.webhook", "/hooks/" + f.ns + "/no-webhook", github(good)},
			{"Secret missing", "/hooks/" + f.ns + "/no-secret", github(good)},
			{"Secret without token", "/hooks/" + f.ns + "/empty-token", github(good)},
		}
		for _, c := range cases {
			got := f.raw(c.path, c.header, body)
			if !bytes.HasPrefix(got, []byte("HTTP/1.1 401 Unauthorized\r\n")) {
				t.Fatalf("%s %s: got\n%s\nwant 401", ev.github, c.name, got)
			}
			refused++
			if first == nil {
				first = got
				continue
			}
			if !bytes.Equal(got, first) {
				t.Errorf("%s %s: response differs from the first push's:\n%q\nwant\n%q", ev.github, c.name, got, first)
			}
		}
		if got := f.post("/hooks/"+f.ns+"/"+ev.to, github(good), body); got.status != http.StatusAccepted {
			t.Fatalf("the correctly signed %s got %d %q, want 202", ev.github, got.status, got.body)
		}
	}
	if c := f.counts(); c["unauthorized"] != refused || c["accepted"] != 2 {
		t.Fatalf("counts %v, want unauthorized %d, accepted 2", c, refused)
	}
}
