package destination

import (
	"strings"
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// FuzzParse: whatever a Secret holds, Parse accepts only https URLs with a
// host, and a refusal never repeats the value it refused; a github or gitlab
// sink's repository path is plain names, so it cannot leave the API's
// repository or project path, and its token cannot break a header.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"https://audit.example.com/kuvryn-sync",
		"http://audit.example.com/kuvryn-sync",
		"https://hooks.slack.com/services/T0/B0/secret",
		"https://user:pass@example.com/",
		"HTTPS://EXAMPLE.COM",
		"https://[::1]:8443/x",
		"https://%zz",
		"://",
		"",
		"javascript:alert(1)",
		"https://github.com/org/repo",
		"https://git.example.com/org/repo.git",
		"https://gitlab.example.com/group/sub/project/",
		"https://gitlab.example.com/group/%2e%2e/project",
		"https://github.com/org/repo?x=1",
	} {
		f.Add(seed, "key")
	}
	f.Fuzz(func(t *testing.T, raw, key string) {
		for _, typ := range []syncv1.SinkType{syncv1.SinkWebhook, syncv1.SinkSlack, syncv1.SinkGitHub, syncv1.SinkGitLab} {
			d, err := Parse(secret(map[string]string{KeyURL: raw, KeyHMACKey: key, KeyToken: key}), typ)
			if err != nil {
				// Values this short can coincide with words of the message.
				if len(strings.TrimSpace(raw)) >= 16 && strings.Contains(err.Error(), strings.TrimSpace(raw)) {
					t.Fatalf("refusal %q repeats the URL", err)
				}
				continue
			}
			if !strings.EqualFold(d.URL.Scheme, "https") || d.URL.Hostname() == "" || d.URL.User != nil {
				t.Fatalf("accepted %q as %+v", raw, d.URL)
			}
			if typ == syncv1.SinkWebhook && len(d.HMACKey) == 0 {
				t.Fatalf("webhook sink accepted without hmacKey")
			}
			if typ == syncv1.SinkGitHub || typ == syncv1.SinkGitLab {
				checkRepository(t, raw, d)
			}
		}
	})
}

func checkRepository(t *testing.T, raw string, d *Destination) {
	r := d.Repository
	if r == nil || d.Token == "" || strings.ContainsAny(d.Token, " \r\n\t") {
		t.Fatalf("accepted %q with repository %+v and token %q", raw, r, d.Token)
	}
	segments := strings.Split(r.Path, "/")
	if len(segments) < 2 || (r.Provider == syncv1.SinkGitHub && len(segments) != 2) {
		t.Fatalf("accepted %q with path %q", raw, r.Path)
	}
	for _, s := range segments {
		if s == "" || s == "." || s == ".." || strings.ContainsAny(s, "%?#\\") {
			t.Fatalf("accepted %q with path segment %q", raw, s)
		}
	}
	if r.API.Scheme != "https" || r.API.RawQuery != "" || (r.API.Path != "" && r.API.Path != "/api/v3" && r.API.Path != "/api/v4") {
		t.Fatalf("accepted %q with API %s", raw, r.API)
	}
}
