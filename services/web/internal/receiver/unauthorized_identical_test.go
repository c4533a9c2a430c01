package receiver

import (
	"bytes"
	"net/http"
	"testing"
)

// TestReceiver_UnauthorizedIsIdenticalWhateverIsMissing sends the same
// signed push to an unknown Repository, with a bad signature, with a
// GitLab token that does not match, to a Repository without spec.webhook,
// one whose Secret is missing, and one whose Secret has no token: every
// response is 401 with the same status line, headers and body, byte for
// byte, so a caller cannot tell which Repositories exist.
func TestReceiver_UnauthorizedIsIdenticalWhateverIsMissing(t *testing.T) {
	f := start(t, fixtureOptions{})
	f.webhookRepositories()

	body := githubPush("acme/platform")
	good := sign(body, "s3cret")
	github := func(sig string) map[string]string {
		return map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": sig}
	}
	cases := []struct {
		name   string
		path   string
		header map[string]string
	}{
		{"unknown Repository", "/hooks/" + f.ns + "/nope", github(good)},
		{"unknown namespace", "/hooks/no-such-namespace/platform", github(good)},
		{"bad signature", "/hooks/" + f.ns + "/platform", github(sign(body, "guess"))},
		{"signature not hex", "/hooks/" + f.ns + "/platform", github("sha256=zz")},
		{"signature without sha256=", "/hooks/" + f.ns + "/platform", github(good[len("sha256="):])},
		{"bad GitLab token", "/hooks/" + f.ns + "/platform", map[string]string{"X-Gitlab-Event": "Push Hook", "X-Gitlab-Token": "guess"}},
		{"no credentials", "/hooks/" + f.ns + "/platform", map[string]string{"X-GitHub-Event": "push"}},
		{"bearer token on a Repository", "/hooks/" + f.ns + "/platform", map[string]string{"Authorization": "Bearer s3cret"}},
		{"no spec.webhook", "/hooks/" + f.ns + "/no-webhook", github(good)},
		{"Secret missing", "/hooks/" + f.ns + "/no-secret", github(good)},
		{"Secret without token", "/hooks/" + f.ns + "/empty-token", github(good)},
	}
	var first []byte
	for _, c := range cases {
		got := f.raw(c.path, c.header, body)
		if !bytes.HasPrefix(got, []byte("HTTP/1.1 401 Unauthorized\r\n")) {
			t.Fatalf("%s: got\n%s\nwant 401", c.name, got)
		}
		if first == nil {
			first = got
			continue
		}
		if !bytes.Equal(got, first) {
			t.Errorf("%s: response differs from %s's:\n%q\nwant\n%q", c.name, cases[0].name, got, first)
		}
	}
	if got := f.post("/hooks/"+f.ns+"/platform", github(good), body); got.status != http.StatusAccepted {
		t.Fatalf("the correctly signed push got %d %q, want 202", got.status, got.body)
	}
	if c := f.counts(); c["unauthorized"] != len(cases) || c["accepted"] != 1 {
		t.Fatalf("counts %v, want unauthorized %d, accepted 1", c, len(cases))
	}
}
