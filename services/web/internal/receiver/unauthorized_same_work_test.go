package receiver

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
)

// apiRecorder records the requests the receiver sends to the API server,
// namespaces and names masked, watches left out.
type apiRecorder struct {
	mu   sync.Mutex
	on   bool
	seen []string
}

func (r *apiRecorder) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.URL.Query().Get("watch") != "true" {
			parts := strings.Split(req.URL.Path, "/")
			for i := 1; i < len(parts); i++ {
				switch parts[i-1] {
				case "namespaces", "secrets", "repositories", "imagepolicies":
					parts[i] = "*"
				}
			}
			r.mu.Lock()
			if r.on {
				r.seen = append(r.seen, req.Method+" "+strings.Join(parts, "/"))
			}
			r.mu.Unlock()
		}
		return next.RoundTrip(req)
	})
}

// during returns the API requests sent while f ran.
func (r *apiRecorder) during(f func()) []string {
	r.mu.Lock()
	r.on, r.seen = true, nil
	r.mu.Unlock()
	f()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.on = false
	return r.seen
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestReceiver_UnauthorizedDoesTheSameWorkWhateverIsMissing sends requests
// that are all refused with 401, to Repositories and ImagePolicies that
// exist with a bad signature or token and to ones that do not exist or name
// no usable Secret: each sends the API server exactly the one uncached
// Secret read a bad signature costs, so that no path skips the API server's
// round trip, by far the longest step.
func TestReceiver_UnauthorizedDoesTheSameWorkWhateverIsMissing(t *testing.T) {
	rec := &apiRecorder{}
	f := start(t, fixtureOptions{transport: rec.wrap})
	f.webhookRepositories()
	f.imagePolicy("api", "hook")

	body := githubPush("acme/platform")
	badSig := map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": sign(body, "guess")}
	badBearer := map[string]string{"Authorization": "Bearer guess"}
	cases := []struct {
		name   string
		path   string
		header map[string]string
	}{
		{"existing Repository, bad signature", "/hooks/" + f.ns + "/platform", badSig},
		{"unknown Repository", "/hooks/" + f.ns + "/nope", badSig},
		{"unknown namespace", "/hooks/no-such-namespace/platform", badSig},
		{"namespace no object can have", "/hooks/No_Such_Namespace/platform", badSig},
		{"no spec.webhook", "/hooks/" + f.ns + "/no-webhook", badSig},
		{"Secret missing", "/hooks/" + f.ns + "/no-secret", badSig},
		{"Secret without token", "/hooks/" + f.ns + "/empty-token", badSig},
		{"existing ImagePolicy, bad bearer token", "/hooks/imagepolicies/" + f.ns + "/api", badBearer},
		{"unknown ImagePolicy", "/hooks/imagepolicies/" + f.ns + "/nope", badBearer},
	}
	want := []string{"GET /api/v1/namespaces/*/secrets/*"}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got response
			reads := rec.during(func() { got = f.post(c.path, c.header, body) })
			if got.status != http.StatusUnauthorized {
				t.Fatalf("got %d %q, want 401", got.status, got.body)
			}
			if !slices.Equal(reads, want) {
				t.Fatalf("API requests %q, want %q", reads, want)
			}
		})
	}
}
