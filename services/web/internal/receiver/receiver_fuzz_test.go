package receiver

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// fuzzNamespace is the namespace the request fuzz test serves, a fixed
// name so that its seeds can name it.
const fuzzNamespace = "receiver-fuzz"

// FuzzReceiver_EveryRequestGetsOneListedAnswer sends the receiver's
// handler requests with any target, event header, credentials and body:
// each one is answered with exactly one of the listed results, its status
// and body byte for byte, counted once under it, and never error or a
// panic; and every answer that only an authenticated request gets
// (accepted, ping, ignored, repository_mismatch, too_many_previews) came
// with the right credentials. cred picks them: 0 a right GitHub signature,
// 1 secret as the signature, 2 the right GitLab token, 3 secret as the
// token, 4 the right bearer token.
func FuzzReceiver_EveryRequestGetsOneListedAnswer(f *testing.F) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fuzzNamespace}}
	must(f, admin.Create(context.Background(), ns))
	f.Cleanup(func() { _ = admin.Delete(context.Background(), ns) })
	clock := &steppedClock{t: time.Date(2026, 12, 7, 19, 0, 0, 0, time.UTC)}
	fx := start(f, fixtureOptions{now: clock.now, namespace: fuzzNamespace})
	fx.webhookRepositories()
	fx.previewRepository("previews", "https://github.com/acme/platform", "hook", &syncv1.PreviewsSpec{PullRequests: syncv1.PreviewProviderGitHub})
	fx.imagePolicy("api", "hook")
	h := fx.rc.Handler()

	repo := "/hooks/" + fuzzNamespace + "/"
	for _, seed := range []struct {
		target, event string
		cred          uint8
		secret        string
		body          []byte
	}{
		{repo + "platform", "push", 0, "", githubPush("acme/platform")},
		{repo + "platform", "Push Hook", 2, "", gitlabPush("acme/other")},
		{repo + "previews", "pull_request", 0, "", githubPullRequest("acme/platform", "opened", 12, commitA, "octocat/platform")},
		{repo + "previews", "pull_request", 0, "", githubPullRequest("acme/platform", "synchronize", 12, "abc", "acme/platform")},
		{repo + "previews", "Merge Request Hook", 2, "", gitlabMergeRequest("acme/platform", "open", 4, commitA, 14, 14)},
		{repo + "platform", "ping", 3, "s3cret", []byte(`{}`)},
		{repo + "nope", "push", 1, "sha256=00", []byte(`{}`)},
		{repo + "no-webhook", "pull_request", 0, "", []byte(`{"action":"opened"}`)},
		{"/hooks/imagepolicies/" + fuzzNamespace + "/api", "", 4, "", nil},
		{"/hooks/imagepolicies/" + fuzzNamespace + "/api", "package", 1, "", nil},
		{"/hooks/Receiver-Fuzz/../platform?x=1", "push", 0, "", githubPush("acme/platform")},
		{repo + "platform%2Fx", "push", 0, "", githubPush("acme/platform")},
		{repo + "platform/", "push", 0, "", githubPush("acme/platform")},
		{"//hooks//" + fuzzNamespace + "/platform", "push", 0, "", githubPush("acme/platform")},
		{"/hooks/%00/%C3%A9", "push", 0, "", nil},
		{"*", "", 0, "", nil},
		{"http://receiver/hooks/" + fuzzNamespace + "/platform", "push", 0, "", githubPush("acme/platform")},
	} {
		f.Add(seed.target, seed.event, seed.cred, seed.secret, seed.body)
	}
	f.Fuzz(func(t *testing.T, target, event string, cred uint8, secret string, body []byte) {
		// Full buckets for every request: a 429 would hide the answer.
		clock.add(11 * time.Second)
		raw := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: receiver\r\nContent-Length: %d\r\n\r\n%s", target, len(body), body)
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader([]byte(raw))))
		if err != nil {
			// net/http refuses it before any handler.
			return
		}
		req.RemoteAddr = "192.0.2.1:40000"
		right := false
		switch cred % 5 {
		case 0:
			req.Header.Set("X-GitHub-Event", event)
			req.Header.Set("X-Hub-Signature-256", sign(body, "s3cret"))
			right = true
		case 1:
			req.Header.Set("X-GitHub-Event", event)
			req.Header.Set("X-Hub-Signature-256", secret)
			right = secret == sign(body, "s3cret")
		case 2:
			req.Header.Set("X-Gitlab-Event", event)
			req.Header.Set("X-Gitlab-Token", "s3cret")
			right = true
		case 3:
			req.Header.Set("X-Gitlab-Event", event)
			req.Header.Set("X-Gitlab-Token", secret)
			right = secret == "s3cret"
		case 4:
			req.Header.Set("Authorization", "Bearer s3cret")
			right = true
		}
		before := fx.counts()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		after := fx.counts()

		var counted []string
		for r, n := range after {
			if n != before[r] {
				counted = append(counted, r)
			}
		}
		if len(counted) != 1 || after[counted[0]] != before[counted[0]]+1 {
			t.Fatalf("%s: counted under %v, want one result once", target, counted)
		}
		res := result(counted[0])
		answer := responses[res]
		if res == resultError {
			t.Fatalf("%s: answered error", target)
		}
		// Unknown paths and methods are bad_request with their own status.
		if rec.Body.String() != answer.body || (rec.Code != answer.status && res != resultBadRequest) {
			t.Fatalf("%s: answered %d %q for %s, want %d %q", target, rec.Code, rec.Body.String(), res, answer.status, answer.body)
		}
		switch res {
		case resultAccepted, resultPing, resultIgnored, resultRepositoryMismatch, resultTooManyPreviews:
			if !right {
				t.Fatalf("%s: %s without the right credentials", target, res)
			}
		}
	})
}
