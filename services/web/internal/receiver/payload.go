package receiver

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
)

// event is what a request asks for, from its provider's event header.
type event int

const (
	eventOther event = iota
	eventPing
	eventPush
	// eventPackage is a GitHub package or registry_package event: an image
	// was published.
	eventPackage
)

// provider is who authenticated a request, which decides how its event
// header reads.
type provider int

const (
	providerGitHub provider = iota + 1
	providerGitLab
	providerBearer
)

// eventOf reads the event header of the provider that authenticated req.
func eventOf(p provider, req *http.Request) event {
	switch p {
	case providerGitHub:
		switch req.Header.Get("X-GitHub-Event") {
		case "push":
			return eventPush
		case "ping":
			return eventPing
		case "package", "registry_package":
			return eventPackage
		}
	case providerGitLab:
		switch req.Header.Get("X-Gitlab-Event") {
		case "Push Hook", "Tag Push Hook":
			return eventPush
		}
	}
	return eventOther
}

// pushPayload holds the URL fields of GitHub and GitLab push payloads: a
// repository is named by several URLs (clone, SSH, web), any of which may
// be the one a Repository follows.
type pushPayload struct {
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

// pushURLs returns the repository URLs a push payload names.
func pushURLs(body []byte) ([]string, error) {
	var p pushPayload
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

// namesRepository reports whether one of urls is the repository at
// repoURL once both are reduced by repoKey.
func namesRepository(urls []string, repoURL string) bool {
	want, ok := repoKey(repoURL)
	if !ok {
		return false
	}
	for _, u := range urls {
		if k, ok := repoKey(u); ok && k == want {
			return true
		}
	}
	return false
}

// repoKey reduces a Git URL to host/path, so that the forms one repository
// is known by compare equal: https://Host/acme/app.git/,
// ssh://git@host:22/acme/app and git@host:acme/app all become
// host/acme/app. Scheme, user and port are dropped (a host serves HTTPS
// and SSH on different ports), the host is lower-cased, and a trailing
// slash and .git are trimmed. The path keeps its case.
func repoKey(raw string) (string, bool) {
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
