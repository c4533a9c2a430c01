// Package gitrepo keeps the source-controller's Git cache: one bare clone per
// Repository, fetched with go-git, and one checkout per commit that a render
// reads. Operations on one Repository are serialised; different Repositories
// proceed in parallel.
//
// Layout under Cache.Dir:
//
//	repos/<namespace>/<name>/              bare clone; remote "origin" records the URL
//	repos/<namespace>/<name>/kuvryn-last-used  its mtime is the clone's last use
//	checkouts/<namespace>/<name>/<commit>/ the tree of one commit; its mtime is its last use
//	tmp/                                   work in progress, renamed into place when complete
package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	objectcache "github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

const (
	remoteName = "origin"
	// lastUsedFile is touched on every use of a clone; its mtime drives Prune.
	lastUsedFile = "kuvryn-last-used"
	// DefaultRevision is followed when a Repository names no revision.
	DefaultRevision = "main"
	// maxTagDepth bounds peeling of tags that point at tags.
	maxTagDepth = 10
)

// fetchRefSpecs mirror branches and tags one to one, so a resolved name is
// the same ref the remote has; "+" lets force-pushes and moved tags through.
var fetchRefSpecs = []config.RefSpec{
	"+refs/heads/*:refs/heads/*",
	"+refs/tags/*:refs/tags/*",
}

// RepoKey names a Repository object; it is also its place in the cache.
type RepoKey struct {
	Namespace string
	Name      string
}

func (k RepoKey) String() string { return k.Namespace + "/" + k.Name }

// validate keeps keys to single path elements, so a key never names a
// directory outside its own.
func (k RepoKey) validate() error {
	for _, f := range []struct{ field, value string }{{"namespace", k.Namespace}, {"name", k.Name}} {
		if f.value == "" || strings.HasPrefix(f.value, ".") || strings.ContainsAny(f.value, "/\\\x00") {
			return fmt.Errorf("Repository %s: %s %q is not a valid object name", k, f.field, f.value)
		}
	}
	return nil
}

// Result is the outcome of a Fetch.
type Result struct {
	// Ref is the revision as resolved: refs/heads/<x>, refs/tags/<x>, or the
	// commit hash itself when the revision was a commit.
	Ref string
	// Commit is the full hash of the commit the revision points to; tags are
	// peeled.
	Commit string
}

// Cache is the Git cache of one process. Set Dir and use it; the zero value
// of the other fields is ready. A Cache must not share Dir with another
// process.
type Cache struct {
	Dir string

	mu    sync.Mutex
	locks map[RepoKey]*keyLock
	// inflight names the entries of tmp/ that operations are still writing.
	inflight map[string]bool
}

// keyLock serialises the operations on one Repository. The channel, unlike a
// Mutex, lets a waiter give up when its context ends.
type keyLock struct {
	ch   chan struct{}
	refs int
}

// lock waits for exclusive use of a Repository's clone and checkouts.
func (c *Cache) lock(ctx context.Context, key RepoKey) (unlock func(), err error) {
	c.mu.Lock()
	if c.locks == nil {
		c.locks = map[RepoKey]*keyLock{}
	}
	l := c.locks[key]
	if l == nil {
		l = &keyLock{ch: make(chan struct{}, 1)}
		c.locks[key] = l
	}
	l.refs++
	c.mu.Unlock()

	release := func() {
		c.mu.Lock()
		l.refs--
		if l.refs == 0 {
			delete(c.locks, key)
		}
		c.mu.Unlock()
	}
	select {
	case l.ch <- struct{}{}:
		return func() { <-l.ch; release() }, nil
	case <-ctx.Done():
		release()
		return nil, fmt.Errorf("waiting for Repository %s: %w", key, ctx.Err())
	}
}

func (c *Cache) cloneDir(key RepoKey) string {
	return filepath.Join(c.Dir, "repos", key.Namespace, key.Name)
}

// openClone opens key's clone for reading, keeping its packfiles open until
// done is called: a checkout or a comparison of commits reads thousands of
// objects, and reopening the packfiles for each was most of their time at
// 1000 Applications (docs/benchmarks.md). A missing clone is
// git.ErrRepositoryNotExists.
func (c *Cache) openClone(key RepoKey) (repo *git.Repository, done func(), err error) {
	storage := filesystem.NewStorageWithOptions(osfs.New(c.cloneDir(key)), objectcache.NewObjectLRUDefault(),
		filesystem.Options{KeepDescriptors: true})
	if repo, err = git.Open(storage, nil); err != nil {
		storage.Close()
		return nil, nil, err
	}
	return repo, func() { storage.Close() }, nil
}

func (c *Cache) checkoutsDir(key RepoKey) string {
	return filepath.Join(c.Dir, "checkouts", key.Namespace, key.Name)
}

func (c *Cache) tmpDir() string { return filepath.Join(c.Dir, "tmp") }

// makeTemp creates a work directory that Prune leaves alone until done
// removes it (a no-op once it has been renamed into place).
func (c *Cache) makeTemp(prefix string) (dir string, done func(), err error) {
	if err := os.MkdirAll(c.tmpDir(), 0o755); err != nil {
		return "", nil, fmt.Errorf("creating Git cache directory: %w", err)
	}
	dir, err = os.MkdirTemp(c.tmpDir(), prefix)
	if err != nil {
		return "", nil, fmt.Errorf("creating Git cache work directory: %w", err)
	}
	c.mu.Lock()
	if c.inflight == nil {
		c.inflight = map[string]bool{}
	}
	c.inflight[filepath.Base(dir)] = true
	c.mu.Unlock()
	return dir, func() {
		_ = os.RemoveAll(dir)
		c.mu.Lock()
		delete(c.inflight, filepath.Base(dir))
		c.mu.Unlock()
	}, nil
}

// Fetch brings the Repository's clone up to date with repoURL, cloning it
// first when missing or when repoURL differs from the one it was cloned from, and
// resolves revision. A revision is a full 40-hex commit, refs/heads/<x>,
// refs/tags/<x>, or a name where a branch wins over a tag; empty means
// DefaultRevision. auth may be nil for anonymous HTTP(S); SSH URLs require
// it.
func (c *Cache) Fetch(ctx context.Context, key RepoKey, repoURL string, auth *Auth, revision string) (Result, error) {
	if err := key.validate(); err != nil {
		return Result{}, err
	}
	if revision == "" {
		revision = DefaultRevision
	}
	method, err := auth.method(key, repoURL)
	if err != nil {
		return Result{}, err
	}
	unlock, err := c.lock(ctx, key)
	if err != nil {
		return Result{}, err
	}
	defer unlock()

	repo, err := c.openOrClone(ctx, key, repoURL, method)
	if err != nil {
		return Result{}, err
	}
	c.touchClone(key)
	return resolve(key, repo, revision)
}

// openOrClone fetches into the existing clone, or builds a fresh one in a
// temporary directory and renames it into place, so a failed first clone
// leaves nothing behind.
func (c *Cache) openOrClone(ctx context.Context, key RepoKey, repoURL string, method transport.AuthMethod) (*git.Repository, error) {
	dir := c.cloneDir(key)
	if repo, err := git.PlainOpen(dir); err == nil && remoteURL(repo) == repoURL {
		if err := fetch(ctx, key, repo, repoURL, method); err != nil {
			return nil, err
		}
		return repo, nil
	}
	// No clone yet, a changed spec.git.url, or a clone that cannot be
	// opened: start afresh, since the remote holds everything the old one had.
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("Repository %s: removing the old clone: %w", key, err)
	}

	tmp, done, err := c.makeTemp("clone-")
	if err != nil {
		return nil, fmt.Errorf("Repository %s: %w", key, err)
	}
	defer done()

	fresh, err := git.PlainInit(tmp, true)
	if err != nil {
		return nil, fmt.Errorf("Repository %s: initialising a clone: %w", key, err)
	}
	if _, err := fresh.CreateRemote(&config.RemoteConfig{Name: remoteName, URLs: []string{repoURL}, Fetch: fetchRefSpecs}); err != nil {
		return nil, fmt.Errorf("Repository %s: configuring remote: %w", key, err)
	}
	if err := fetch(ctx, key, fresh, repoURL, method); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, fmt.Errorf("Repository %s: creating clone directory: %w", key, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return nil, fmt.Errorf("Repository %s: moving the clone into place: %w", key, err)
	}
	repo, err := git.PlainOpen(dir)
	if err != nil {
		return nil, fmt.Errorf("Repository %s: opening the new clone: %w", key, err)
	}
	return repo, nil
}

func fetch(ctx context.Context, key RepoKey, repo *git.Repository, repoURL string, method transport.AuthMethod) error {
	err := repo.FetchContext(ctx, &git.FetchOptions{
		RemoteName: remoteName,
		RefSpecs:   fetchRefSpecs,
		Auth:       method,
		Tags:       git.NoTags,
		Force:      true,
		Prune:      true,
	})
	if err == nil || errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil
	}
	return fmt.Errorf("Repository %s: fetching %s: %w", key, redactURL(repoURL), err)
}

func remoteURL(repo *git.Repository) string {
	remote, err := repo.Remote(remoteName)
	if err != nil || len(remote.Config().URLs) == 0 {
		return ""
	}
	return remote.Config().URLs[0]
}

// touchClone records a use of the clone for Prune; a failure only makes the
// clone look older, which costs a re-clone at worst.
func (c *Cache) touchClone(key RepoKey) {
	path := filepath.Join(c.cloneDir(key), lastUsedFile)
	now := time.Now()
	if err := os.Chtimes(path, now, now); errors.Is(err, os.ErrNotExist) {
		if f, err := os.Create(path); err == nil {
			_ = f.Close()
		}
	}
}

// resolve turns a revision into a ref and the commit it points to.
func resolve(key RepoKey, repo *git.Repository, revision string) (Result, error) {
	if isCommitHash(revision) {
		hash := plumbing.NewHash(strings.ToLower(revision))
		if _, err := repo.CommitObject(hash); err != nil {
			return Result{}, fmt.Errorf("Repository %s: revision %q: commit not found in any fetched branch or tag: %w", key, revision, err)
		}
		return Result{Ref: hash.String(), Commit: hash.String()}, nil
	}

	var candidates []plumbing.ReferenceName
	switch {
	case strings.HasPrefix(revision, "refs/heads/"), strings.HasPrefix(revision, "refs/tags/"):
		candidates = []plumbing.ReferenceName{plumbing.ReferenceName(revision)}
	case strings.HasPrefix(revision, "refs/"):
		return Result{}, fmt.Errorf("Repository %s: revision %q: only refs/heads/ and refs/tags/ references are fetched", key, revision)
	default:
		candidates = []plumbing.ReferenceName{plumbing.NewBranchReferenceName(revision), plumbing.NewTagReferenceName(revision)}
	}
	for _, name := range candidates {
		ref, err := repo.Reference(name, true)
		if errors.Is(err, plumbing.ErrReferenceNotFound) {
			continue
		}
		if err != nil {
			return Result{}, fmt.Errorf("Repository %s: revision %q: reading %s: %w", key, revision, name, err)
		}
		commit, err := peel(repo, ref.Hash())
		if err != nil {
			return Result{}, fmt.Errorf("Repository %s: revision %q: %s: %w", key, revision, name, err)
		}
		return Result{Ref: name.String(), Commit: commit.String()}, nil
	}
	return Result{}, fmt.Errorf("Repository %s: revision %q not found: no such branch or tag", key, revision)
}

// peel follows annotated tags to the commit they name.
func peel(repo *git.Repository, hash plumbing.Hash) (plumbing.Hash, error) {
	for range maxTagDepth {
		obj, err := repo.Object(plumbing.AnyObject, hash)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("reading object %s: %w", hash, err)
		}
		switch o := obj.(type) {
		case *object.Commit:
			return o.Hash, nil
		case *object.Tag:
			hash = o.Target
		default:
			return plumbing.ZeroHash, fmt.Errorf("points to a %s, not a commit", obj.Type())
		}
	}
	return plumbing.ZeroHash, fmt.Errorf("tag chain is longer than %d tags", maxTagDepth)
}

func isCommitHash(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, r := range s {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f' || 'A' <= r && r <= 'F') {
			return false
		}
	}
	return true
}

// redactURL hides a password written into a URL by a user.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	return u.Redacted()
}
