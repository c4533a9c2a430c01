package receiver

import (
	"net/http"
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestReceiver_PushEventsStampOnlyPushesForTheRepositoryURL sends GitHub
// and GitLab events to a Repository following an scp-like URL: pushes
// naming it in any of its forms are accepted and stamp the Repository,
// ping is answered, other events are ignored, a push for another
// repository is repository_mismatch and a payload that is not JSON is
// bad_request; none of those stamps anything.
func TestReceiver_PushEventsStampOnlyPushesForTheRepositoryURL(t *testing.T) {
	f := start(t, fixtureOptions{})
	f.secret("hook", "s3cret")
	f.repository("github", "git@github.com:acme/platform.git", "hook")
	f.repository("gitlab", "https://GitLab.example.com/acme/platform/", "hook")
	github := func(event string, body []byte) map[string]string {
		return map[string]string{"X-GitHub-Event": event, "X-Hub-Signature-256": sign(body, "s3cret")}
	}
	gitlab := func(event string) map[string]string {
		return map[string]string{"X-Gitlab-Event": event, "X-Gitlab-Token": "s3cret"}
	}
	cases := []struct {
		name   string
		repo   string
		header func(body []byte) map[string]string
		body   []byte
		status int
		result string
	}{
		{"GitHub push", "github", func(b []byte) map[string]string { return github("push", b) }, githubPush("acme/platform"), http.StatusAccepted, "accepted"},
		{"GitHub ping", "github", func(b []byte) map[string]string { return github("ping", b) }, []byte(`{"zen":"Keep it logically awesome.","hook_id":1}`), http.StatusOK, "ping"},
		{"GitHub issues event", "github", func(b []byte) map[string]string { return github("issues", b) }, []byte(`{"action":"opened"}`), http.StatusOK, "ignored"},
		{"GitHub push for another repository", "github", func(b []byte) map[string]string { return github("push", b) }, githubPush("acme/other"), http.StatusUnprocessableEntity, "repository_mismatch"},
		{"GitHub push with path in other case", "github", func(b []byte) map[string]string { return github("push", b) }, githubPush("Acme/Platform"), http.StatusUnprocessableEntity, "repository_mismatch"},
		{"GitHub push that is not JSON", "github", func(b []byte) map[string]string { return github("push", b) }, []byte(`{"repository":`), http.StatusBadRequest, "bad_request"},
		{"GitHub push naming no URL", "github", func(b []byte) map[string]string { return github("push", b) }, []byte(`{}`), http.StatusUnprocessableEntity, "repository_mismatch"},
		{"GitLab push", "gitlab", func([]byte) map[string]string { return gitlab("Push Hook") }, gitlabPush("acme/platform"), http.StatusAccepted, "accepted"},
		{"GitLab tag push", "gitlab", func([]byte) map[string]string { return gitlab("Tag Push Hook") }, gitlabPush("acme/platform"), http.StatusAccepted, "accepted"},
		{"GitLab merge request", "gitlab", func([]byte) map[string]string { return gitlab("Merge Request Hook") }, []byte(`{"object_kind":"merge_request"}`), http.StatusOK, "ignored"},
		{"GitLab push for another project", "gitlab", func([]byte) map[string]string { return gitlab("Push Hook") }, gitlabPush("acme/other"), http.StatusUnprocessableEntity, "repository_mismatch"},
	}
	want := map[string]int{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			repo := &syncv1.Repository{}
			before := f.annotation(repo, c.repo, syncv1.ReconcileRequestedAtAnnotation)
			got := f.post("/hooks/"+f.ns+"/"+c.repo, c.header(c.body), c.body)
			want[c.result]++
			if got.status != c.status {
				t.Fatalf("%d %q, want %d (%s)", got.status, got.body, c.status, c.result)
			}
			after := f.annotation(repo, c.repo, syncv1.ReconcileRequestedAtAnnotation)
			if stamped := after != before; stamped != (c.result == "accepted") {
				t.Fatalf("%s went from %q to %q on a %s request", syncv1.ReconcileRequestedAtAnnotation, before, after, c.result)
			}
		})
	}
	got := f.counts()
	for r, n := range got {
		if n != want[r] {
			t.Errorf("count of %s = %d, want %d (all: %v)", r, n, want[r], got)
		}
	}
}
