// Package pushpayload reads the repository URLs out of GitHub and GitLab
// push payloads and compares Git URLs. It parses untrusted request bodies,
// so it stands alone, without a cluster, where its fuzz test can run fast.
package pushpayload

import (
	"encoding/json"
	"net/url"
	"strings"
)

// payload holds the URL fields of GitHub and GitLab push payloads: a
// repository is named by several URLs (clone, SSH, web), any of which may
// be the one a Repository follows.
type payload struct {
	Repository struct {
		CloneURL   string `json:"clone_url"`
		SSHURL     string `json:"ssh_url"`
		GitURL     string `json:"git_url"`
		HTMLURL    string `json:"html_url"`
		URL        string `json:"url"`
		GitHTTPURL string `json:"git_http_url"`
		GitSSHURL  string `json:"git_ssh_url"`
		Homepage   string `json:"homepage"`
	} `json:"repository"`
	Project struct {
		GitHTTPURL string `json:"git_http_url"`
		GitSSHURL  string `json:"git_ssh_url"`
		HTTPURL    string `json:"http_url"`
		SSHURL     string `json:"ssh_url"`
		WebURL     string `json:"web_url"`
	} `json:"project"`
}

// URLs returns the repository URLs a push payload names.
func URLs(body []byte) ([]string, error) {
	var p payload
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, err
	}
	r, g := p.Repository, p.Project
	var urls []string
	for _, u := range []string{r.CloneURL, r.SSHURL, r.GitURL, r.HTMLURL, r.URL, r.GitHTTPURL, r.GitSSHURL, r.Homepage,
		g.GitHTTPURL, g.GitSSHURL, g.HTTPURL, g.SSHURL, g.WebURL} {
		if u != "" {
			urls = append(urls, u)
		}
	}
	return urls, nil
}

// Names reports whether one of urls is the repository at
// repoURL once both are reduced by Key.
func Names(urls []string, repoURL string) bool {
	want, ok := Key(repoURL)
	if !ok {
		return false
	}
	for _, u := range urls {
		if k, ok := Key(u); ok && k == want {
			return true
		}
	}
	return false
}

// Key reduces a Git URL to host/path, so that the forms one repository
// is known by compare equal: https://Host/acme/app.git/,
// ssh://git@host:22/acme/app and git@host:acme/app all become
// host/acme/app. Scheme, user and port are dropped (a host serves HTTPS
// and SSH on different ports), the host is lower-cased, and a trailing
// slash and .git are trimmed. The path keeps its case.
func Key(raw string) (string, bool) {
	s := strings.TrimSpace(raw)
	var host, path string
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil {
			return "", false
		}
		host, path = u.Hostname(), u.Path
	} else {
		// scp-like [user@]host:path: the colon comes before any slash.
		colon := strings.IndexByte(s, ':')
		if colon <= 0 || strings.Contains(s[:colon], "/") {
			return "", false
		}
		host, path = s[:colon], s[colon+1:]
		if at := strings.LastIndexByte(host, '@'); at >= 0 {
			host = host[at+1:]
		}
	}
	host = strings.ToLower(host)
	path = strings.TrimRight(strings.TrimSuffix(strings.Trim(path, "/"), ".git"), "/")
	if host == "" || path == "" {
		return "", false
	}
	return host + "/" + path, true
}
