package prpayload

import (
	"testing"
	"time"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// FuzzPullRequestPayload feeds arbitrary bytes to both parsers: no input
// may panic, and every annotation built from an event that acts must read
// back, through the source-controller's parser, as that event.
func FuzzPullRequestPayload(f *testing.F) {
	for _, seed := range []string{
		`{}`,
		`null`,
		`[]`,
		`{"action":"opened","pull_request":null}`,
		`{"action":"closed","pull_request":{"number":-1,"head":{"sha":"","repo":null},"base":{"repo":null}}}`,
		`{"action":"opened","pull_request":{"number":99999999999999999999}}`,
		`{"action":"synchronize","pull_request":{"number":1,"head":{"sha":"0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c","ref":"a..b"}}}`,
		`{"object_attributes":{"action":"merge","iid":2147483647,"last_commit":{"id":"da1560886d4f094c3e6c9ef40349f7d38b5d27d7"},"source_branch":"\u0000"}}`,
		`{"object_attributes":{"action":"open","iid":1,"last_commit":null,"source_project_id":1e3}}`,
		githubEvent("opened", 12, headSHA, sameRepo),
		gitlabEvent("update", 4, mrSHA, 15, 14),
	} {
		f.Add([]byte(seed))
	}
	at := time.Date(2026, 12, 7, 18, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte) {
		for provider, parse := range map[syncv1.PreviewProvider]func([]byte) (Event, bool, error){
			syncv1.PreviewProviderGitHub: GitHub,
			syncv1.PreviewProviderGitLab: GitLab,
		} {
			ev, acts, err := parse(body)
			if err != nil || !acts {
				continue
			}
			key, value, err := Annotation(provider, ev, at)
			if err != nil {
				continue
			}
			name, req, ok, err := syncv1.ParsePreviewRequest(key, value)
			if !ok || err != nil || name != syncv1.PullRequestPreviewName(provider, req.Number) ||
				int64(req.Number) != ev.Number || req.Commit != ev.Commit || req.Branch != ev.Branch ||
				req.Fork != ev.Fork || req.Closed != ev.Closed {
				t.Fatalf("%s event %+v became %s=%s, which reads back as %q %+v, %v, %v", provider, ev, key, value, name, req, ok, err)
			}
		}
	})
}
