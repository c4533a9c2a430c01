package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// PreviewRequestAnnotationPrefix starts the annotation, one per preview,
// by which the webhook receiver (a pull or merge request event) or `ksync
// plan --ref` asks the source-controller to preview a ref:
// "preview.sync.kuvryn.io/<preview name>" with a JSON PreviewRequest as
// value. The source-controller never writes it; it reads every such
// annotation on each reconcile of the Repository.
const PreviewRequestAnnotationPrefix = "preview.sync.kuvryn.io/"

// MaxPreviewRequestBytes bounds one request annotation's value.
const MaxPreviewRequestBytes = 1024

// PreviewRequest is the value of a preview request annotation.
type PreviewRequest struct {
	// Number of the pull or merge request; zero for a branch.
	Number int32 `json:"number,omitempty"`
	// Branch previewed, or the pull request's head branch, for display.
	Branch string `json:"branch,omitempty"`
	// Commit the host reported as the head; empty when unknown (`ksync
	// plan --ref`), and the source-controller fetches the ref's tip.
	Commit string `json:"commit,omitempty"`
	// Fork is true when the pull request's head is in another repository.
	Fork bool `json:"fork,omitempty"`
	// Closed is true once the pull request is closed or merged.
	Closed bool `json:"closed,omitempty"`
	// At is when the request was made; a newer request replaces an older one.
	At metav1.Time `json:"at"`
}

// PullRequestPreviewName is the preview name of pull (github) or merge
// (gitlab) request number n: "pr-<n>" or "mr-<n>".
func PullRequestPreviewName(provider PreviewProvider, n int32) string {
	if provider == PreviewProviderGitLab {
		return "mr-" + strconv.Itoa(int(n))
	}
	return "pr-" + strconv.Itoa(int(n))
}

// BranchPreviewName is the preview name of a branch: "branch-" and the
// first 10 hex digits of the branch name's sha256, since a branch name is
// not always a valid label value.
func BranchPreviewName(branch string) string {
	sum := sha256.Sum256([]byte(branch))
	return "branch-" + hex.EncodeToString(sum[:])[:10]
}

// PreviewRef is the Git ref the named preview fetches: its name says
// whose pull or merge request it is, or that it is a branch.
func PreviewRef(name string, req PreviewRequest) string {
	switch {
	case strings.HasPrefix(name, "mr-"):
		return fmt.Sprintf("refs/merge-requests/%d/head", req.Number)
	case strings.HasPrefix(name, "pr-"):
		return fmt.Sprintf("refs/pull/%d/head", req.Number)
	default:
		return "refs/heads/" + req.Branch
	}
}

// PreviewRequestAnnotation is the annotation key of the named preview.
func PreviewRequestAnnotation(name string) string { return PreviewRequestAnnotationPrefix + name }

// ParsePreviewRequest reads one annotation. ok is false for a key that is
// not a preview request; err names what is wrong with one that is.
func ParsePreviewRequest(key, value string) (name string, req PreviewRequest, ok bool, err error) {
	name, ok = strings.CutPrefix(key, PreviewRequestAnnotationPrefix)
	if !ok {
		return "", PreviewRequest{}, false, nil
	}
	fail := func(format string, args ...any) (string, PreviewRequest, bool, error) {
		return name, PreviewRequest{}, true, fmt.Errorf("annotation %s: %s", key, fmt.Sprintf(format, args...))
	}
	if len(value) > MaxPreviewRequestBytes {
		return fail("value is %d bytes, more than %d", len(value), MaxPreviewRequestBytes)
	}
	dec := json.NewDecoder(strings.NewReader(value))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return fail("value is not a preview request: %v", err)
	}
	if dec.More() {
		return fail("value holds more than one JSON object")
	}
	if req.At.IsZero() {
		return fail("at is missing")
	}
	if req.Number < 0 {
		return fail("number %d is negative", req.Number)
	}
	if len(req.Branch) > 255 || strings.ContainsAny(req.Branch, " ~^:?*[\\\x7f") || strings.ContainsFunc(req.Branch, func(r rune) bool { return r < 0x20 }) || strings.Contains(req.Branch, "..") {
		return fail("branch %q is not a Git branch name", req.Branch)
	}
	if req.Commit != "" && !isHexCommit(req.Commit) {
		return fail("commit %q is not a full commit hash", req.Commit)
	}
	switch prefix, rest, _ := strings.Cut(name, "-"); prefix {
	case "pr", "mr":
		if n, err := strconv.ParseInt(rest, 10, 32); err != nil || int32(n) != req.Number || n <= 0 || strconv.FormatInt(n, 10) != rest {
			return fail("name %q does not match number %d", name, req.Number)
		}
	case "branch":
		if req.Branch == "" || BranchPreviewName(req.Branch) != name {
			return fail("name %q is not the preview name of branch %q", name, req.Branch)
		}
	default:
		return fail("name %q is not pr-<n>, mr-<n> or branch-<hash>", name)
	}
	if errs := validation.IsValidLabelValue(name); len(errs) > 0 {
		return fail("name %q is not a label value: %s", name, strings.Join(errs, "; "))
	}
	return name, req, true, nil
}

// MarshalPreviewRequest is the annotation value of req.
func MarshalPreviewRequest(req PreviewRequest) (string, error) {
	b, err := json.Marshal(req)
	return string(b), err
}

func isHexCommit(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}
