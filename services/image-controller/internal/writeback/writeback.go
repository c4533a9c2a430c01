// Package writeback commits selected images into a Git branch: it clones
// the branch into memory, rewrites setter markers under a path, commits
// only when a value changed and pushes, starting over from a fresh clone
// when the branch moved meanwhile.
package writeback

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-billy/v5/util"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/kuvryn/kuvryn-sync/services/image-controller/internal/setters"
)

const (
	// DefaultMaxAttempts bounds the clone-apply-push rounds of one update.
	DefaultMaxAttempts = 5
	// maxFileBytes skips files too large to be hand-written YAML.
	maxFileBytes = 1 << 20
)

// ErrBranchMoved is returned when every attempt lost the race to another push.
var ErrBranchMoved = errors.New("the branch moved during every push attempt")

// Request says what to update.
type Request struct {
	// Repository names the Repository object, for messages.
	Repository string
	URL        string
	Auth       transport.AuthMethod
	Branch     string
	// Path is the directory whose markerFiles are rewritten; "" is the root.
	Path string
	// Namespace is the Repository's; markers naming others are refused.
	Namespace string
	// Images maps an ImagePolicy name in Namespace to its selected image.
	Images map[string]setters.Image
}

// Location is a file and line in the repository.
type Location struct {
	File string
	Line int
	Ref  string
}

func (l Location) String() string { return fmt.Sprintf("%s:%d (%s)", l.File, l.Line, l.Ref) }

// Outcome is what one Update did.
type Outcome struct {
	// Commit is the pushed commit; "" when nothing changed.
	Commit string
	// Head is the branch's commit the markers were read at.
	Head string
	// Updated maps policy namespace:name to the image written, for the
	// policies whose markers changed.
	Updated map[string]string
	// Files is how many files changed.
	Files int
	// Refused lists markers naming another namespace's policy.
	Refused []Location
	// Attempts is how many clone-apply-push rounds ran.
	Attempts int
}

// Writer commits images. Its zero value uses the defaults.
type Writer struct {
	AuthorName  string
	AuthorEmail string
	MaxAttempts int
	// Backoff is the wait before the second attempt, doubled after each.
	Backoff time.Duration

	// beforePush runs before each push; tests move the branch in it.
	beforePush func(attempt int)
}

// Update applies req to its branch and pushes the result.
func (w *Writer) Update(ctx context.Context, req Request) (Outcome, error) {
	attempts := w.MaxAttempts
	if attempts <= 0 {
		attempts = DefaultMaxAttempts
	}
	wait := w.Backoff
	if wait <= 0 {
		wait = 200 * time.Millisecond
	}
	var lastErr error
	for attempt := 1; attempt <= attempts; attempt++ {
		out, retry, err := w.attempt(ctx, req, attempt)
		out.Attempts = attempt
		if err == nil || !retry {
			return out, err
		}
		lastErr = err
		select {
		case <-ctx.Done():
			return out, ctx.Err()
		case <-time.After(wait):
		}
		wait *= 2
	}
	return Outcome{Attempts: attempts}, fmt.Errorf("%w (%d attempts): %w", ErrBranchMoved, attempts, lastErr)
}

// attempt runs one round; retry says a failure may pass on a fresh clone.
func (w *Writer) attempt(ctx context.Context, req Request, n int) (Outcome, bool, error) {
	branch := plumbing.NewBranchReferenceName(req.Branch)
	fs := memfs.New()
	repo, err := git.CloneContext(ctx, memory.NewStorage(), fs, &git.CloneOptions{
		URL: req.URL, Auth: req.Auth, ReferenceName: branch, SingleBranch: true, Tags: git.NoTags,
	})
	if err != nil {
		return Outcome{}, transient(err), fmt.Errorf("cloning branch %s of %s: %w", req.Branch, req.URL, err)
	}
	head, err := repo.Head()
	if err != nil {
		return Outcome{}, false, err
	}
	out := Outcome{Head: head.Hash().String(), Updated: map[string]string{}}
	changed, err := rewrite(fs, req, &out)
	if err != nil || len(changed) == 0 {
		return out, false, err
	}
	wt, err := repo.Worktree()
	if err != nil {
		return out, false, err
	}
	for _, p := range changed {
		if _, err := wt.Add(p); err != nil {
			return out, false, fmt.Errorf("staging %s: %w", p, err)
		}
	}
	sig := &object.Signature{Name: w.AuthorName, Email: w.AuthorEmail, When: time.Now()}
	if sig.Name == "" {
		sig.Name = "Kuvryn Sync image-controller"
	}
	if sig.Email == "" {
		sig.Email = "image-controller@sync.kuvryn.io"
	}
	commit, err := wt.Commit(message(out.Updated), &git.CommitOptions{Author: sig, Committer: sig})
	if err != nil {
		return out, false, fmt.Errorf("committing: %w", err)
	}
	if w.beforePush != nil {
		w.beforePush(n)
	}
	err = repo.PushContext(ctx, &git.PushOptions{
		Auth:     req.Auth,
		RefSpecs: []config.RefSpec{config.RefSpec(branch + ":" + branch)},
	})
	if err != nil {
		return out, transient(err), fmt.Errorf("pushing %s to branch %s of %s: %w", commit.String()[:12], req.Branch, req.URL, err)
	}
	out.Commit = commit.String()
	return out, false, nil
}

// transient says whether a fresh attempt may succeed: anything but refused
// credentials, a missing branch or a cancelled context.
func transient(err error) bool {
	return !errors.Is(err, transport.ErrAuthenticationRequired) &&
		!errors.Is(err, transport.ErrAuthorizationFailed) &&
		!errors.Is(err, transport.ErrRepositoryNotFound) &&
		!errors.Is(err, plumbing.ErrReferenceNotFound) &&
		!errors.Is(err, context.Canceled) &&
		!strings.Contains(err.Error(), "couldn't find remote ref")
}

// rewrite applies the markers of every markerFile under req.Path and returns
// the changed paths.
func rewrite(fs billy.Filesystem, req Request, out *Outcome) ([]string, error) {
	root := path.Clean("/" + req.Path)
	if _, err := fs.Lstat(root); err != nil {
		return nil, fmt.Errorf("Repository %s: spec.imageUpdate.path %q does not exist on branch %s", req.Repository, req.Path, req.Branch)
	}
	var changed []string
	err := util.Walk(fs, root, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		// Symlinks are not followed: they could point outside the path.
		if !info.Mode().IsRegular() || !markerFile(p) || info.Size() > maxFileBytes {
			return nil
		}
		data, err := util.ReadFile(fs, p)
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(p, "/")
		updated, res := setters.Apply(data, req.Namespace, req.Images)
		for _, m := range res.Refused {
			out.Refused = append(out.Refused, Location{File: rel, Line: m.Line, Ref: m.Ref()})
		}
		if len(res.Changed) == 0 {
			return nil
		}
		for _, c := range res.Changed {
			out.Updated[c.Ref()] = req.Images[c.Policy].String()
		}
		f, err := fs.OpenFile(p, os.O_WRONLY|os.O_TRUNC, info.Mode())
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, strings.NewReader(string(updated))); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		changed = append(changed, rel)
		out.Files++
		return nil
	})
	return changed, err
}

// markerFile says whether a file is read for markers: YAML files, and
// Kustomization, the one name kustomize and Flux read a kustomization from
// without a YAML extension. Other files without extension are not YAML.
func markerFile(p string) bool {
	ext := path.Ext(p)
	return ext == ".yaml" || ext == ".yml" || path.Base(p) == "Kustomization"
}

// message names each policy and the image it now selects.
func message(updated map[string]string) string {
	refs := make([]string, 0, len(updated))
	for r := range updated {
		refs = append(refs, r)
	}
	sort.Strings(refs)
	var b strings.Builder
	if len(refs) == 1 {
		fmt.Fprintf(&b, "Update %s to %s\n", refs[0], updated[refs[0]])
	} else {
		fmt.Fprintf(&b, "Update images of %d ImagePolicies\n", len(refs))
	}
	b.WriteString("\n")
	for _, r := range refs {
		fmt.Fprintf(&b, "ImagePolicy %s: %s\n", r, updated[r])
	}
	return b.String()
}
