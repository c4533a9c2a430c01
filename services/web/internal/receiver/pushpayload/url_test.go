package pushpayload

import "testing"

// TestKey_NormalisesTheFormsOfOneRepository lists the URL forms of one
// repository that must compare equal, and near misses that must not.
func TestKey_NormalisesTheFormsOfOneRepository(t *testing.T) {
	cases := []struct {
		url  string
		key  string
		isOK bool
	}{
		{"https://github.com/acme/app", "github.com/acme/app", true},
		{"https://github.com/acme/app.git", "github.com/acme/app", true},
		{"https://github.com/acme/app/", "github.com/acme/app", true},
		{"https://github.com/acme/app.git/", "github.com/acme/app", true},
		{"https://GitHub.COM/acme/app", "github.com/acme/app", true},
		{"https://token@github.com:443/acme/app", "github.com/acme/app", true},
		{"http://github.com/acme/app", "github.com/acme/app", true},
		{"ssh://git@github.com/acme/app.git", "github.com/acme/app", true},
		{"ssh://git@github.com:2222/acme/app", "github.com/acme/app", true},
		{"git://github.com/acme/app.git", "github.com/acme/app", true},
		{"git@github.com:acme/app.git", "github.com/acme/app", true},
		{"git@GITHUB.com:acme/app", "github.com/acme/app", true},
		{"github.com:acme/app.git", "github.com/acme/app", true},
		{"git@github.com:/acme/app.git/", "github.com/acme/app", true},
		{"  https://github.com/acme/app \n", "github.com/acme/app", true},
		{"https://gitlab.example.com/group/sub/app.git", "gitlab.example.com/group/sub/app", true},
		{"http://127.0.0.1:40123/e2e-rollout-platform.git", "127.0.0.1/e2e-rollout-platform", true},
		// The path keeps its case: only the host is case-insensitive.
		{"https://github.com/Acme/App", "github.com/Acme/App", true},
		{"https://github.com/acme/app.gitx", "github.com/acme/app.gitx", true},
		{"", "", false},
		{"https://github.com", "", false},
		{"https://github.com/", "", false},
		{"https:///acme/app", "", false},
		{"/srv/git/app.git", "", false},
		{"acme/app:x", "", false},
		{":acme/app", "", false},
		{"git@github.com:", "", false},
		{"https://github.com/%zz", "", false},
	}
	for _, c := range cases {
		key, ok := Key(c.url)
		if ok != c.isOK || key != c.key {
			t.Errorf("Key(%q) = %q, %v; want %q, %v", c.url, key, ok, c.key, c.isOK)
		}
	}
}

// TestNames_MatchesAnyURLOfThePayload checks a payload's several
// URLs against the Repository's one.
func TestNames_MatchesAnyURLOfThePayload(t *testing.T) {
	payload := []string{"https://api.github.com/repos/acme/app", "git@github.com:acme/app.git"}
	cases := []struct {
		repoURL string
		want    bool
	}{
		{"https://github.com/acme/app", true},
		{"ssh://git@github.com/acme/app", true},
		{"https://github.com/acme/other", false},
		{"https://gitlab.com/acme/app", false},
		{"not a url", false},
	}
	for _, c := range cases {
		if got := Names(payload, c.repoURL); got != c.want {
			t.Errorf("Names(%v, %q) = %v, want %v", payload, c.repoURL, got, c.want)
		}
	}
}
