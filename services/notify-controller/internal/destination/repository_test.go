package destination

import (
	"errors"
	"strings"
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestParse_GitHostRepositoryAndAPIBase: a github or gitlab sink's url is
// the repository's web address, from which the API base and the repository
// path follow as Flux derives them; its token is required. A refusal names
// the key and never repeats the URL or the token.
func TestParse_GitHostRepositoryAndAPIBase(t *testing.T) {
	const token = "ghp_s3cretTOKEN"
	for _, tc := range []struct {
		name     string
		typ      syncv1.SinkType
		url      string
		token    string
		wantAPI  string
		wantPath string
		wantKey  string
	}{
		{name: "github.com", typ: syncv1.SinkGitHub, url: "https://github.com/org/repo", token: token, wantAPI: "https://api.github.com", wantPath: "org/repo"},
		{name: "github.com .git and slash", typ: syncv1.SinkGitHub, url: "https://GitHub.com/org/repo.git/", token: token, wantAPI: "https://api.github.com", wantPath: "org/repo"},
		{name: "enterprise", typ: syncv1.SinkGitHub, url: "https://git.example.com:8443/org/repo", token: token, wantAPI: "https://git.example.com:8443/api/v3", wantPath: "org/repo"},
		{name: "gitlab subgroups", typ: syncv1.SinkGitLab, url: "https://gitlab.example.com/group/sub/project", token: token, wantAPI: "https://gitlab.example.com/api/v4", wantPath: "group/sub/project"},
		{name: "gitlab.com", typ: syncv1.SinkGitLab, url: "https://gitlab.com/group/project", token: " " + token + "\n", wantAPI: "https://gitlab.com/api/v4", wantPath: "group/project"},
		{name: "github three segments", typ: syncv1.SinkGitHub, url: "https://github.com/org/repo/pulls", token: token, wantKey: "url"},
		{name: "github owner only", typ: syncv1.SinkGitHub, url: "https://github.com/org", token: token, wantKey: "url"},
		{name: "gitlab project only", typ: syncv1.SinkGitLab, url: "https://gitlab.com/project", token: token, wantKey: "url"},
		{name: "dot dot", typ: syncv1.SinkGitLab, url: "https://gitlab.com/group/../project", token: token, wantKey: "url"},
		{name: "escaped slash", typ: syncv1.SinkGitHub, url: "https://github.com/org%2Frepo/x", token: token, wantKey: "url"},
		{name: "query", typ: syncv1.SinkGitHub, url: "https://github.com/org/repo?tab=x", token: token, wantKey: "url"},
		{name: "http", typ: syncv1.SinkGitHub, url: "http://github.com/org/repo", token: token, wantKey: "url"},
		{name: "no token", typ: syncv1.SinkGitHub, url: "https://github.com/org/repo", wantKey: "token"},
		{name: "token with a newline inside", typ: syncv1.SinkGitLab, url: "https://gitlab.com/group/project", token: "ab\ncd" + token, wantKey: "token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := map[string]string{"url": tc.url}
			if tc.token != "" {
				data["token"] = tc.token
			}
			d, err := Parse(secret(data), tc.typ)
			if tc.wantKey == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if d.Repository.API.String() != tc.wantAPI || d.Repository.Path != tc.wantPath || d.Token != token {
					t.Errorf("API %s path %s token %q, want %s %s %q", d.Repository.API, d.Repository.Path, d.Token, tc.wantAPI, tc.wantPath, token)
				}
				return
			}
			var perr *Error
			if !errors.As(err, &perr) || perr.Key != tc.wantKey {
				t.Fatalf("Parse = %v, want a refusal of key %s", err, tc.wantKey)
			}
			if msg := err.Error(); strings.Contains(msg, token) || strings.Contains(msg, "example.com") || strings.Contains(msg, "org/repo") {
				t.Errorf("message %q repeats the URL or the token", msg)
			}
		})
	}
}
