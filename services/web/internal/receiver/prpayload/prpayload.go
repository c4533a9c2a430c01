// Package prpayload reads GitHub pull_request and GitLab Merge Request Hook
// payloads into preview requests. It parses untrusted request bodies, so it
// stands alone, without a cluster, where its fuzz test can run fast.
package prpayload

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// Event is what a pull or merge request event says of its request.
type Event struct {
	// Number is the pull request's number or the merge request's iid.
	Number int64
	// Commit is the head commit.
	Commit string
	// Branch is the head (source) branch.
	Branch string
	// Fork is true when the head is in another repository.
	Fork bool
	// Closed is true once the request is closed or merged.
	Closed bool
}

// githubPayload holds the fields of a pull_request event the receiver reads.
type githubPayload struct {
	Action      string `json:"action"`
	PullRequest struct {
		Number int64 `json:"number"`
		Head   struct {
			SHA  string      `json:"sha"`
			Ref  string      `json:"ref"`
			Repo *githubRepo `json:"repo"`
		} `json:"head"`
		Base struct {
			Repo *githubRepo `json:"repo"`
		} `json:"base"`
	} `json:"pull_request"`
}

type githubRepo struct {
	FullName string `json:"full_name"`
}

// GitHub reads a pull_request event. acts is false for an action that
// changes no preview (edited, labeled, assigned, ...), whose other fields
// are not read.
func GitHub(body []byte) (ev Event, acts bool, err error) {
	var p githubPayload
	if err := json.Unmarshal(body, &p); err != nil {
		return Event{}, false, err
	}
	switch p.Action {
	case "opened", "synchronize", "reopened":
	case "closed":
		ev.Closed = true
	default:
		return Event{}, false, nil
	}
	pr := p.PullRequest
	ev.Number, ev.Commit, ev.Branch = pr.Number, pr.Head.SHA, pr.Head.Ref
	// A deleted fork's head repository is null.
	ev.Fork = pr.Head.Repo == nil || pr.Base.Repo == nil || pr.Head.Repo.FullName != pr.Base.Repo.FullName
	return ev, true, nil
}

// gitlabPayload holds the fields of a Merge Request Hook the receiver reads.
type gitlabPayload struct {
	ObjectAttributes struct {
		Action          string `json:"action"`
		IID             int64  `json:"iid"`
		SourceBranch    string `json:"source_branch"`
		SourceProjectID int64  `json:"source_project_id"`
		TargetProjectID int64  `json:"target_project_id"`
		LastCommit      struct {
			ID string `json:"id"`
		} `json:"last_commit"`
	} `json:"object_attributes"`
}

// GitLab reads a Merge Request Hook. acts is false for an action that
// changes no preview (approved, unapproved, ...), whose other fields are
// not read.
func GitLab(body []byte) (ev Event, acts bool, err error) {
	var p gitlabPayload
	if err := json.Unmarshal(body, &p); err != nil {
		return Event{}, false, err
	}
	a := p.ObjectAttributes
	switch a.Action {
	case "open", "update", "reopen":
	case "close", "merge":
		ev.Closed = true
	default:
		return Event{}, false, nil
	}
	ev.Number, ev.Commit, ev.Branch = a.IID, a.LastCommit.ID, a.SourceBranch
	ev.Fork = a.SourceProjectID != a.TargetProjectID
	return ev, true, nil
}

// Annotation is the preview request annotation that ev asks for at at:
// its key, for preview pr-<n> (github) or mr-<n> (gitlab), and its value.
// err says what makes ev no request: a number that is not positive, a
// commit that is not a full hash, a branch that is not a branch name.
func Annotation(provider syncv1.PreviewProvider, ev Event, at time.Time) (key, value string, err error) {
	number, commit := "pull_request.number", "pull_request.head.sha"
	if provider == syncv1.PreviewProviderGitLab {
		number, commit = "object_attributes.iid", "object_attributes.last_commit.id"
	}
	if ev.Number <= 0 || ev.Number > math.MaxInt32 {
		return "", "", fmt.Errorf("%s: number %d is not a positive 32-bit number", number, ev.Number)
	}
	if ev.Commit == "" {
		return "", "", fmt.Errorf("%s: the head commit is missing", commit)
	}
	n := int32(ev.Number)
	key = syncv1.PreviewRequestAnnotation(syncv1.PullRequestPreviewName(provider, n))
	value, err = syncv1.MarshalPreviewRequest(syncv1.PreviewRequest{Number: n, Branch: ev.Branch, Commit: ev.Commit,
		Fork: ev.Fork, Closed: ev.Closed, At: metav1.NewTime(at)})
	if err != nil {
		return "", "", err
	}
	// The source-controller's own parser judges the rest, so the receiver
	// never stamps a request it would refuse.
	if _, _, _, err := syncv1.ParsePreviewRequest(key, value); err != nil {
		return "", "", err
	}
	return key, value, nil
}
