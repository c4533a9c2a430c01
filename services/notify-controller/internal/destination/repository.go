package destination

import (
	"net/url"
	"strings"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// Repository is where a github or gitlab sink reports: the API to call and
// the repository (GitHub owner/repo) or project (GitLab group/.../project)
// in it, read from the repository's web address.
type Repository struct {
	Provider syncv1.SinkType
	// API is https://api.github.com for github.com, otherwise
	// <scheme>://<host>/api/v3 (GitHub Enterprise) or /api/v4 (GitLab).
	API *url.URL
	// Path is owner/repo or group/sub/project, unescaped.
	Path string
}

// maxPathSegments bounds a GitLab project's nesting (GitLab allows 20 levels of subgroups).
const maxPathSegments = 21

// ParseRepository reads the repository of a github or gitlab sink from its
// validated https URL, and says what is wrong in words that do not repeat it.
func ParseRepository(u *url.URL, provider syncv1.SinkType) (*Repository, string) {
	if u.RawQuery != "" || u.ForceQuery {
		return nil, "must be the repository's web address, without a ?query"
	}
	path := strings.TrimSuffix(strings.Trim(u.Path, "/"), ".git")
	segments := strings.Split(path, "/")
	for _, s := range segments {
		if s == "" || s == "." || s == ".." || strings.ContainsFunc(s, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.')
		}) {
			return nil, "must be the repository's web address, https://<host>/<owner>/<repository>: its path must be names of letters, digits, '-', '_' and '.'"
		}
	}
	api := &url.URL{Scheme: strings.ToLower(u.Scheme), Host: u.Host}
	switch provider {
	case syncv1.SinkGitHub:
		if len(segments) != 2 {
			return nil, "must be a GitHub repository's web address, https://<host>/<owner>/<repository>"
		}
		if h := strings.ToLower(u.Hostname()); h == "github.com" || h == "www.github.com" {
			api.Host = "api.github.com"
		} else {
			api.Path = "/api/v3"
		}
	case syncv1.SinkGitLab:
		if len(segments) < 2 || len(segments) > maxPathSegments {
			return nil, "must be a GitLab project's web address, https://<host>/<group>/[<subgroup>/...]<project>"
		}
		api.Path = "/api/v4"
	default:
		return nil, "names no repository: the sink is neither github nor gitlab"
	}
	return &Repository{Provider: provider, API: api, Path: path}, ""
}
