package receiver

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/hex"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// hostileAnswers are the status and body of each result, written out here
// rather than read from the package, so that a body that starts to vary
// with the request (echoing attacker input, say) fails the test.
var hostileAnswers = map[string]struct {
	status int
	body   string
}{
	"accepted":            {http.StatusAccepted, "accepted\n"},
	"ignored":             {http.StatusOK, "ignored: not an event that asks for a fetch or a scan\n"},
	"ping":                {http.StatusOK, "pong\n"},
	"unauthorized":        {http.StatusUnauthorized, "unauthorized\n"},
	"bad_request":         {http.StatusBadRequest, "bad request\n"},
	"repository_mismatch": {http.StatusUnprocessableEntity, "repository_mismatch: the push names none of the Repository's spec.git.url\n"},
}

// hostileBody is one request of the table: the object its path names
// ("Repository/<name>" or "ImagePolicy/<name>"), its headers, built from
// the body it carries, and the result it must get.
type hostileBody struct {
	name   string
	to     string
	header func(body []byte) http.Header
	body   []byte
	result string
}

// The tokens of the table's webhook Secrets.
const (
	hostileToken = "s3cret"
	otherToken   = "0th3r"
)

// push is a minimal GitHub push for the repository at url, with extra
// top-level members (already JSON, each followed by a comma) before it.
func push(url, extra string) []byte {
	// url goes in as it is, not escaped, so that the table can put raw
	// bytes or JSON escapes into it.
	return []byte(`{` + extra + `"ref":"refs/heads/main","after":"6113728f27ae82c7b1a177c8d03f9e96e0adf246","repository":{"full_name":"acme/platform","clone_url":"` + url + `"}}`)
}

// github signs the body with token as GitHub does and names event ("" sends
// no event header).
func github(event, token string) func([]byte) http.Header {
	return func(body []byte) http.Header {
		h := http.Header{"X-Hub-Signature-256": {sign(body, token)}}
		if event != "" {
			h.Set("X-GitHub-Event", event)
		}
		return h
	}
}

// githubSig sends event with the signature header given, whatever the body.
func githubSig(event string, signatures ...string) func([]byte) http.Header {
	return func([]byte) http.Header {
		return http.Header{"X-GitHub-Event": {event}, "X-Hub-Signature-256": signatures}
	}
}

// gitlab sends token as X-Gitlab-Token with event ("" sends no event).
func gitlab(event, token string) func([]byte) http.Header {
	return func([]byte) http.Header {
		h := http.Header{"X-Gitlab-Token": {token}}
		if event != "" {
			h.Set("X-Gitlab-Event", event)
		}
		return h
	}
}

// with adds header k: v to what h builds; k is sent exactly as written.
func with(h func([]byte) http.Header, k, v string) func([]byte) http.Header {
	return func(body []byte) http.Header {
		out := h(body)
		out[k] = append(out[k], v)
		return out
	}
}

func gzipped(tb testing.TB, write func(io.Writer) error) []byte {
	tb.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	must(tb, write(zw))
	must(tb, zw.Close())
	return b.Bytes()
}

// hostileBodies lists the requests an attacker, or a broken Git host, may
// send to the push endpoint, and a few to the image endpoint. Only
// "accepted" may stamp anything. Some accepted entries look hostile but are
// signed with the token and name the Repository's URL: all the receiver
// then does is stamp the time of its own clock, which only makes the
// source-controller fetch spec.git.revision; nothing of the payload (its
// ref, its other fields) is read or written anywhere.
func hostileBodies(t *testing.T) []hostileBody {
	const (
		platform = "https://github.com/acme/platform"
		other    = "https://github.com/acme/other"
	)
	good := push(platform, "")
	ghPush := github("push", hostileToken)
	half := good[:len(good)/2]
	// A string just short of the 1 MB limit, so the body is read whole.
	huge := strings.Repeat("a", MaxBodyBytes-200)
	bomb := gzipped(t, func(w io.Writer) error {
		zero := make([]byte, 1<<20)
		for range 16 {
			if _, err := w.Write(zero); err != nil {
				return err
			}
		}
		return nil
	})
	form := []byte("payload=" + url.QueryEscape(string(good)))
	sha1Sig := func(body []byte) string {
		mac := hmac.New(sha1.New, []byte(hostileToken))
		mac.Write(body)
		return "sha1=" + hex.EncodeToString(mac.Sum(nil))
	}
	utf16 := func(s string) []byte {
		out := []byte{0xff, 0xfe}
		for _, r := range s {
			out = append(out, byte(r), 0)
		}
		return out
	}
	return []hostileBody{
		// The entries the snapshot check must see stamp.
		{"signed GitHub push naming the Repository", "Repository/platform", ghPush, good, "accepted"},
		{"signed GitLab push naming the Repository", "Repository/gitlab", gitlab("Push Hook", hostileToken), gitlabPush("acme/platform"), "accepted"},

		// Malformed or truncated JSON.
		{"push cut in half", "Repository/platform", ghPush, half, "bad_request"},
		{"push of one brace", "Repository/platform", ghPush, []byte("{"), "bad_request"},
		{"push with trailing garbage", "Repository/platform", ghPush, append(bytes.Clone(good), 'x'), "bad_request"},
		{"two push documents back to back", "Repository/platform", ghPush, append(bytes.Clone(good), good...), "bad_request"},
		{"whitespace only", "Repository/platform", ghPush, []byte(" \r\n\t"), "bad_request"},
		{"raw NUL byte inside a string", "Repository/platform", ghPush, bytes.Replace(good, []byte("main"), []byte("ma\x00in"), 1), "bad_request"},
		{"single quotes", "Repository/platform", ghPush, []byte(`{'repository':{'clone_url':'` + platform + `'}}`), "bad_request"},

		// Wrong types.
		{"ref a number", "Repository/platform", ghPush, bytes.Replace(good, []byte(`"refs/heads/main"`), []byte(`1`), 1), "accepted"},
		{"ref an object", "Repository/platform", ghPush, bytes.Replace(good, []byte(`"refs/heads/main"`), []byte(`{"$ne":null}`), 1), "accepted"},
		{"repository a string", "Repository/platform", ghPush, []byte(`{"repository":"` + platform + `"}`), "bad_request"},
		{"repository an array", "Repository/platform", ghPush, []byte(`{"repository":[{"clone_url":"` + platform + `"}]}`), "bad_request"},
		{"clone_url a number", "Repository/platform", ghPush, []byte(`{"repository":{"clone_url":1,"html_url":"` + platform + `"}}`), "bad_request"},
		{"clone_url an object", "Repository/platform", ghPush, []byte(`{"repository":{"clone_url":{"url":"` + platform + `"}}}`), "bad_request"},
		{"body an array", "Repository/platform", ghPush, []byte(`[` + string(good) + `]`), "bad_request"},
		{"body a string", "Repository/platform", ghPush, []byte(`"` + platform + `"`), "bad_request"},
		{"body a number", "Repository/platform", ghPush, []byte(`1e400`), "bad_request"},

		// Null everywhere: JSON that names no URL.
		{"body null", "Repository/platform", ghPush, []byte(`null`), "repository_mismatch"},
		{"every member null", "Repository/platform", ghPush, []byte(`{"ref":null,"before":null,"after":null,"repository":null,"project":null,"commits":null}`), "repository_mismatch"},
		{"every URL null", "Repository/platform", ghPush, []byte(`{"repository":{"clone_url":null,"ssh_url":null,"git_url":null,"html_url":null,"url":null},"project":{"web_url":null}}`), "repository_mismatch"},

		// Deep nesting: the decoder stops at its depth limit of 10,000
		// instead of exhausting the stack.
		{"10k [ unclosed", "Repository/platform", ghPush, []byte(strings.Repeat("[", 10000)), "bad_request"},
		{"10k [ closed, inside a push naming the Repository", "Repository/platform", ghPush,
			push(platform, `"x":`+strings.Repeat("[", 10000)+strings.Repeat("]", 10000)+`,`), "bad_request"},
		{"100k nested objects", "Repository/platform", ghPush, []byte(strings.Repeat(`{"a":`, 100000) + "0" + strings.Repeat("}", 100000)), "bad_request"},

		// Huge strings under the limit.
		{"1 MB clone_url starting with the Repository's URL", "Repository/platform", ghPush, push(platform+huge, ""), "repository_mismatch"},
		{"1 MB string beside the Repository's URL", "Repository/platform", ghPush, push(platform, `"x":"`+huge+`",`), "accepted"},

		// Duplicate keys: the last wins, objects named twice merge, keys
		// match in any case, and the signature is over the raw bytes.
		{"clone_url twice, the Repository's last", "Repository/platform", ghPush, []byte(`{"repository":{"clone_url":"` + other + `","clone_url":"` + platform + `"}}`), "accepted"},
		{"clone_url twice, the Repository's first", "Repository/platform", ghPush, []byte(`{"repository":{"clone_url":"` + platform + `","clone_url":"` + other + `"}}`), "repository_mismatch"},
		{"repository twice, merged", "Repository/platform", ghPush, []byte(`{"repository":{"html_url":"` + platform + `"},"repository":{"clone_url":"` + other + `"}}`), "accepted"},
		{"ref twice", "Repository/platform", ghPush, push(platform, `"ref":"refs/heads/evil",`), "accepted"},
		{"keys in upper case", "Repository/platform", ghPush, []byte(`{"REPOSITORY":{"CLONE_URL":"` + platform + `"}}`), "accepted"},
		{"clone_url twice, signed over the other order", "Repository/platform",
			githubSig("push", sign([]byte(`{"repository":{"clone_url":"`+platform+`","clone_url":"`+other+`"}}`), hostileToken)),
			[]byte(`{"repository":{"clone_url":"` + other + `","clone_url":"` + platform + `"}}`), "unauthorized"},

		// Bytes that are not UTF-8 JSON.
		{"invalid UTF-8 after the URL", "Repository/platform", ghPush, push(platform+"\xff", ""), "repository_mismatch"},
		{"invalid UTF-8 outside a string", "Repository/platform", ghPush, append([]byte("\xff"), good...), "bad_request"},
		{"invalid UTF-8 beside the Repository's URL", "Repository/platform", ghPush, push(platform, "\"x\":\"\xc3\x28\xed\xa0\x80\","), "accepted"},
		{"byte order mark", "Repository/platform", ghPush, append([]byte("\xef\xbb\xbf"), good...), "bad_request"},
		{"UTF-16", "Repository/platform", ghPush, utf16(string(good)), "bad_request"},

		// Signatures.
		{"valid signature of another body", "Repository/platform", githubSig("push", sign(good, hostileToken)), push(platform, `"ref":"refs/heads/evil",`), "unauthorized"},
		{"signed with another Repository's token", "Repository/platform", github("push", otherToken), good, "unauthorized"},
		{"signature twice, wrong first", "Repository/platform", func(b []byte) http.Header {
			return githubSig("push", sign(b, "guess"), sign(b, hostileToken))(b)
		}, good, "unauthorized"},
		// The receiver checks the first value it reads; that one is valid.
		{"signature twice, valid first", "Repository/platform", func(b []byte) http.Header {
			return githubSig("push", sign(b, hostileToken), sign(b, "guess"))(b)
		}, good, "accepted"},
		// Header names are case-insensitive in HTTP.
		{"signature header in lower case", "Repository/platform", func(b []byte) http.Header {
			return http.Header{"X-GitHub-Event": {"push"}, "x-hub-signature-256": {sign(b, hostileToken)}}
		}, good, "accepted"},
		{"signature in upper-case hex", "Repository/platform", func(b []byte) http.Header {
			return githubSig("push", "sha256="+strings.ToUpper(strings.TrimPrefix(sign(b, hostileToken), "sha256=")))(b)
		}, good, "accepted"},
		{"sha1= prefix with an HMAC-SHA1", "Repository/platform", func(b []byte) http.Header { return githubSig("push", sha1Sig(b))(b) }, good, "unauthorized"},
		{"SHA256= prefix", "Repository/platform", func(b []byte) http.Header {
			return githubSig("push", "SHA256="+strings.TrimPrefix(sign(b, hostileToken), "sha256="))(b)
		}, good, "unauthorized"},
		{"signature truncated to 16 bytes", "Repository/platform", func(b []byte) http.Header {
			return githubSig("push", sign(b, hostileToken)[:len("sha256=")+32])(b)
		}, good, "unauthorized"},
		{"sha256= and nothing", "Repository/platform", githubSig("push", "sha256="), good, "unauthorized"},
		{"only the legacy X-Hub-Signature", "Repository/platform", func(b []byte) http.Header {
			return http.Header{"X-GitHub-Event": {"push"}, "X-Hub-Signature": {sha1Sig(b)}}
		}, good, "unauthorized"},
		// The first credential header present is the one checked.
		{"wrong GitHub signature beside a valid GitLab token", "Repository/platform",
			with(github("push", "guess"), "X-Gitlab-Token", hostileToken), good, "unauthorized"},
		{"empty body signed, push", "Repository/platform", ghPush, []byte{}, "bad_request"},
		{"empty body signed, ping", "Repository/platform", github("ping", hostileToken), []byte{}, "ping"},
		{"push to an unknown Repository", "Repository/nope", ghPush, good, "unauthorized"},
		{"bearer token on a Repository", "Repository/platform", func([]byte) http.Header {
			return http.Header{"X-GitHub-Event": {"push"}, "Authorization": {"Bearer " + hostileToken}}
		}, good, "unauthorized"},

		// Another Repository, another branch, odd refs.
		{"push naming another Repository's URL", "Repository/platform", ghPush, push(other, ""), "repository_mismatch"},
		{"push naming the Repository sent to another", "Repository/other", github("push", otherToken), good, "repository_mismatch"},
		{"push to a Repository signed with this one's token", "Repository/other", ghPush, push(other, ""), "unauthorized"},
		{"lookalike host", "Repository/platform", ghPush, push("https://github.com.evil.example/acme/platform", ""), "repository_mismatch"},
		{"Repository's URL as userinfo", "Repository/platform", ghPush, push("https://github.com/acme/platform@evil.example/x", ""), "repository_mismatch"},
		{"dot-dot into the Repository's path", "Repository/platform", ghPush, push("https://github.com/acme/other/../platform", ""), "repository_mismatch"},
		{"NUL after the Repository's URL", "Repository/platform", ghPush, push(platform+`\u0000.evil.example`, ""), "repository_mismatch"},
		{"URL only in fields that do not name the repository", "Repository/platform", ghPush,
			[]byte(`{"repository":{"mirror_url":"` + platform + `"},"commits":[{"url":"` + platform + `/commit/1"}],"compare":"` + platform + `"}`), "repository_mismatch"},
		{"push to another branch", "Repository/platform", ghPush, bytes.Replace(good, []byte("refs/heads/main"), []byte("refs/heads/feature"), 1), "accepted"},
		{"ref with ..", "Repository/platform", ghPush, bytes.Replace(good, []byte("refs/heads/main"), []byte("refs/heads/../../etc/passwd"), 1), "accepted"},
		{"ref with an escaped NUL", "Repository/platform", ghPush, bytes.Replace(good, []byte("refs/heads/main"), []byte(`refs/heads/ma\u0000in`), 1), "accepted"},
		{"ref of 10k characters", "Repository/platform", ghPush, bytes.Replace(good, []byte("refs/heads/main"), []byte("refs/heads/"+strings.Repeat("m", 10000)), 1), "accepted"},

		// Content types and encodings: the receiver judges the bytes.
		{"form-encoded payload signed as GitHub does", "Repository/platform",
			with(ghPush, "Content-Type", "application/x-www-form-urlencoded"), form, "bad_request"},
		{"JSON push labelled text/plain", "Repository/platform", with(ghPush, "Content-Type", "text/plain"), good, "accepted"},
		{"gzip push signed over the gzip bytes", "Repository/platform", with(ghPush, "Content-Encoding", "gzip"),
			gzipped(t, func(w io.Writer) error { _, err := w.Write(good); return err }), "bad_request"},
		{"gzip push signed over the JSON", "Repository/platform", with(githubSig("push", sign(good, hostileToken)), "Content-Encoding", "gzip"),
			gzipped(t, func(w io.Writer) error { _, err := w.Write(good); return err }), "unauthorized"},
		{"gzip bomb of 16 MB, never inflated", "Repository/platform", with(ghPush, "Content-Encoding", "gzip"), bomb, "bad_request"},

		// Events that are not pushes, from each provider.
		{"GitHub ping", "Repository/platform", github("ping", hostileToken), []byte(`{"zen":"Design for failure.","hook_id":1}`), "ping"},
		{"GitHub create of a tag", "Repository/platform", github("create", hostileToken), push(platform, `"ref_type":"tag",`), "ignored"},
		{"GitHub delete of a branch", "Repository/platform", github("delete", hostileToken), push(platform, `"ref_type":"branch",`), "ignored"},
		{"GitHub push deleting a branch", "Repository/platform", ghPush,
			bytes.Replace(push(platform, `"deleted":true,`), []byte("6113728f27ae82c7b1a177c8d03f9e96e0adf246"), []byte(strings.Repeat("0", 40)), 1), "accepted"},
		{"GitHub push of a tag", "Repository/platform", ghPush, bytes.Replace(good, []byte("refs/heads/main"), []byte("refs/tags/v1.0.0"), 1), "accepted"},
		{"GitHub push without an event header", "Repository/platform", github("", hostileToken), good, "ignored"},
		{"GitHub event Push in title case", "Repository/platform", github("Push", hostileToken), good, "ignored"},
		{"GitHub event header with a GitLab token", "Repository/platform", with(gitlab("", hostileToken), "X-GitHub-Event", "push"), good, "ignored"},
		{"GitLab event header with a GitHub signature", "Repository/platform", with(github("", hostileToken), "X-Gitlab-Event", "Push Hook"), good, "ignored"},
		{"GitLab tag push deleting a tag", "Repository/gitlab", gitlab("Tag Push Hook", hostileToken),
			bytes.Replace(gitlabPush("acme/platform"), []byte(`"ref":"refs/heads/main"`), []byte(`"ref":"refs/tags/v1","before":"`+strings.Repeat("1", 40)+`","after":"`+strings.Repeat("0", 40)+`","checkout_sha":null`), 1), "accepted"},
		{"GitLab System Hook", "Repository/gitlab", gitlab("System Hook", hostileToken), gitlabPush("acme/platform"), "ignored"},
		{"GitLab push hook in lower case", "Repository/gitlab", gitlab("push hook", hostileToken), gitlabPush("acme/platform"), "ignored"},
		{"GitLab push with another Repository's token", "Repository/gitlab", gitlab("Push Hook", otherToken), gitlabPush("acme/platform"), "unauthorized"},
		{"GitLab push cut in half", "Repository/gitlab", gitlab("Push Hook", hostileToken), gitlabPush("acme/platform")[:200], "bad_request"},
		{"GitLab push naming another project", "Repository/gitlab", gitlab("Push Hook", hostileToken), gitlabPush("acme/other"), "repository_mismatch"},
		{"GitLab project in the GitHub Repository's place", "Repository/platform", gitlab("Push Hook", hostileToken), gitlabPush("acme/platform"), "repository_mismatch"},
		{"GitLab push with repository a string", "Repository/gitlab", gitlab("Push Hook", hostileToken), []byte(`{"object_kind":"push","repository":"x"}`), "bad_request"},

		// The image endpoint: a bearer token asks a scan whatever the body,
		// as documented; GitHub events other than packages do not.
		{"image: bearer token with a truncated body", "ImagePolicy/api", func([]byte) http.Header {
			return http.Header{"Authorization": {"Bearer " + hostileToken}}
		}, half, "accepted"},
		{"image: GitHub push event", "ImagePolicy/api", github("push", hostileToken), good, "ignored"},
		{"image: bearer with another token", "ImagePolicy/api", func([]byte) http.Header {
			return http.Header{"Authorization": {"Bearer " + otherToken}}
		}, good, "unauthorized"},
		{"image: GitHub package event with a wrong signature", "ImagePolicy/api", github("package", "guess"), good, "unauthorized"},
	}
}

// objectState is what a request may change on a Repository or an
// ImagePolicy.
type objectState struct {
	resourceVersion string
	annotations     map[string]string
	labels          map[string]string
	spec            any
}

// snapshot reads every Repository and ImagePolicy of the namespace as
// admin, from the API server.
func (f *fixture) snapshot() map[string]objectState {
	f.t.Helper()
	out := map[string]objectState{}
	repos := &syncv1.RepositoryList{}
	must(f.t, admin.List(context.Background(), repos, client.InNamespace(f.ns)))
	for _, r := range repos.Items {
		out["Repository/"+r.Name] = objectState{r.ResourceVersion, r.Annotations, r.Labels, r.Spec}
	}
	policies := &syncv1.ImagePolicyList{}
	must(f.t, admin.List(context.Background(), policies, client.InNamespace(f.ns)))
	for _, p := range policies.Items {
		out["ImagePolicy/"+p.Name] = objectState{p.ResourceVersion, p.Annotations, p.Labels, p.Spec}
	}
	return out
}

// TestHostileWebhookBody_EveryBodyIsRefusedAndNothingIsRequested sends
// every entry of hostileBodies to a real receiver and checks its exact
// status, body and result label, and that no Repository or ImagePolicy of
// the namespace changed, except, for an accepted entry, the one stamp
// annotation of the object it names, set to the receiver's clock. The
// clock moves 11 s before each entry so that every entry starts with full
// rate-limit buckets: a 429 would hide the answer under test.
func TestHostileWebhookBody_EveryBodyIsRefusedAndNothingIsRequested(t *testing.T) {
	var (
		mu    sync.Mutex
		clock = time.Date(2026, 12, 4, 20, 0, 0, 0, time.UTC)
	)
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return clock
	}
	f := start(t, fixtureOptions{now: now})
	f.secret("hook", hostileToken)
	f.secret("other-hook", otherToken)
	f.repository("platform", "https://github.com/acme/platform", "hook")
	f.repository("other", "https://github.com/acme/other", "other-hook")
	f.repository("gitlab", "https://gitlab.example.com/acme/platform", "hook")
	f.imagePolicy("api", "hook")

	hc := &http.Client{Timeout: 30 * time.Second}
	defer hc.CloseIdleConnections()
	stampOf := map[string]string{"Repository": syncv1.ReconcileRequestedAtAnnotation, "ImagePolicy": syncv1.ScanRequestedAtAnnotation}

	want := map[string]int{}
	accepted := 0
	for _, c := range hostileBodies(t) {
		t.Run(c.name, func(t *testing.T) {
			answer, ok := hostileAnswers[c.result]
			if !ok {
				t.Fatalf("no answer listed for result %q", c.result)
			}
			mu.Lock()
			clock = clock.Add(11 * time.Second)
			mu.Unlock()
			kind, name, _ := strings.Cut(c.to, "/")
			path := "/hooks/" + f.ns + "/" + name
			if kind == "ImagePolicy" {
				path = "/hooks/imagepolicies/" + f.ns + "/" + name
			}
			before, countsBefore := f.snapshot(), f.counts()

			req, err := http.NewRequest(http.MethodPost, f.url+path, bytes.NewReader(c.body))
			must(t, err)
			// Set as a map so that names go out exactly as written.
			for k, v := range c.header(c.body) {
				req.Header[k] = v
			}
			resp, err := hc.Do(req)
			if err != nil {
				// A panic in the handler shows as a dropped connection.
				t.Fatalf("no answer: %v", err)
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			must(t, err)
			if resp.StatusCode != answer.status || string(got) != answer.body {
				t.Errorf("answered %d %q, want %d %q (%s)", resp.StatusCode, got, answer.status, answer.body, c.result)
			}

			// Exactly one response counted, under its result.
			want[c.result]++
			countsAfter := f.counts()
			for r, n := range countsAfter {
				wantRise := 0
				if r == c.result {
					wantRise = 1
				}
				if d := n - countsBefore[r]; d != wantRise {
					t.Errorf("%s rose by %d, want the request counted once under %s", r, d, c.result)
				}
			}

			after := f.snapshot()
			if len(after) != len(before) {
				t.Fatalf("objects before %d, after %d", len(before), len(after))
			}
			for key, b := range before {
				a := after[key]
				if c.result != "accepted" || key != c.to {
					if a.resourceVersion != b.resourceVersion {
						t.Errorf("%s changed (resourceVersion %s to %s, annotations %v to %v) on a %s request",
							key, b.resourceVersion, a.resourceVersion, b.annotations, a.annotations, c.result)
					}
					continue
				}
				annotation := stampOf[kind]
				if stamp := now().UTC().Format(time.RFC3339Nano); a.annotations[annotation] != stamp || a.resourceVersion == b.resourceVersion {
					t.Errorf("%s: %s = %q, resourceVersion %s to %s, want stamped %s", key, annotation, a.annotations[annotation],
						b.resourceVersion, a.resourceVersion, stamp)
				}
				// Nothing else of the object moved.
				ba, aa := map[string]string{}, map[string]string{}
				for k, v := range b.annotations {
					ba[k] = v
				}
				for k, v := range a.annotations {
					aa[k] = v
				}
				delete(ba, annotation)
				delete(aa, annotation)
				if !equality.Semantic.DeepEqual(ba, aa) || !equality.Semantic.DeepEqual(b.labels, a.labels) || !equality.Semantic.DeepEqual(b.spec, a.spec) {
					t.Errorf("%s: more than %s changed: annotations %v to %v, labels %v to %v, spec %+v to %+v",
						key, annotation, b.annotations, a.annotations, b.labels, a.labels, b.spec, a.spec)
				}
				accepted++
			}
		})
	}
	// The check above only means something if it saw stamps happen.
	if accepted == 0 {
		t.Fatal("no entry stamped anything: the snapshot check was never shown to detect a stamp")
	}
	t.Logf("results %v", want)
}
