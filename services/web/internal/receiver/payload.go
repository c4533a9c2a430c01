package receiver

import (
	"net/http"
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
	// eventPullRequest is a GitHub pull_request event or a GitLab Merge
	// Request Hook.
	eventPullRequest
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
		case "pull_request":
			return eventPullRequest
		}
	case providerGitLab:
		switch req.Header.Get("X-Gitlab-Event") {
		case "Push Hook", "Tag Push Hook":
			return eventPush
		case "Merge Request Hook":
			return eventPullRequest
		}
	}
	return eventOther
}
