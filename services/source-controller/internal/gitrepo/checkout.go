package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

const (
	// maxTreeDepth bounds recursion through hostile, deeply nested trees.
	maxTreeDepth = 256
	// maxSymlinkTarget bounds the blob read as a symlink target (PATH_MAX).
	maxSymlinkTarget = 4096
)

// ErrNotFetched says a checkout asked for a commit this process's cache has
// not fetched: after a restart or a leader change the cache starts empty
// while Repository status already names a commit. It heals with the next
// fetch, so callers retry soon instead of failing the render.
var ErrNotFetched = errors.New("commit not fetched into this cache")

// Checkout returns a directory holding the tree of commit, which Fetch must
// have brought into the Repository's clone. The directory is written once,
// in a temporary place, and renamed into place complete, so readers never
// see a partial tree; later calls return it at once. Modes are kept:
// executables stay executable and symlinks stay symlinks, whatever they
// point to, so the renderer can refuse those that leave the repository.
// Trees with entries that are absolute, contain "..", name ".git" or clash
// with another entry are refused. Submodules become empty directories.
func (c *Cache) Checkout(ctx context.Context, key RepoKey, commit string) (string, error) {
	if err := key.validate(); err != nil {
		return "", err
	}
	if !isCommitHash(commit) {
		return "", fmt.Errorf("Repository %s: %q is not a full commit hash", key, commit)
	}
	commit = strings.ToLower(commit)
	unlock, err := c.lock(ctx, key)
	if err != nil {
		return "", err
	}
	defer unlock()

	dir := filepath.Join(c.checkoutsDir(key), commit)
	if info, err := os.Lstat(dir); err == nil && info.IsDir() {
		c.touchCheckout(dir)
		c.touchClone(key)
		return dir, nil
	}

	repo, closeClone, err := c.openClone(key)
	if errors.Is(err, git.ErrRepositoryNotExists) {
		return "", fmt.Errorf("Repository %s has no clone to check out %s from; fetch it first: %w", key, commit, ErrNotFetched)
	}
	if err != nil {
		return "", fmt.Errorf("Repository %s: opening clone: %w", key, err)
	}
	defer closeClone()
	tree, err := commitTree(key, repo, commit)
	if err != nil {
		return "", err
	}

	tmp, done, err := c.makeTemp("checkout-")
	if err != nil {
		return "", fmt.Errorf("Repository %s: %w", key, err)
	}
	defer done()
	if err := writeTree(ctx, repo.Storer, tmp, tree); err != nil {
		return "", fmt.Errorf("Repository %s: checking out commit %s: %w", key, commit, err)
	}
	// MkdirTemp creates 0700; a checkout is read like any other tree.
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", fmt.Errorf("Repository %s: checking out commit %s: %w", key, commit, err)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", fmt.Errorf("Repository %s: creating checkout directory: %w", key, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return "", fmt.Errorf("Repository %s: moving checkout of %s into place: %w", key, commit, err)
	}
	c.touchCheckout(dir)
	c.touchClone(key)
	return dir, nil
}

// touchCheckout records a use of a checkout for Prune.
func (c *Cache) touchCheckout(dir string) {
	now := time.Now()
	_ = os.Chtimes(dir, now, now)
}

// writeTree writes tree into dir through an os.Root, so nothing can land
// outside dir. Every directory is created here with Mkdir and every file and
// symlink with exclusive creation, so an entry never writes through a
// symlink or over another entry, even in a tree with duplicate names.
func writeTree(ctx context.Context, s storer.EncodedObjectStorer, dir string, tree *object.Tree) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	w := &treeWriter{ctx: ctx, storer: s, root: root}
	return w.write(tree, "", 0)
}

type treeWriter struct {
	ctx    context.Context
	storer storer.EncodedObjectStorer
	root   *os.Root
}

func (w *treeWriter) write(tree *object.Tree, dir string, depth int) error {
	if depth > maxTreeDepth {
		// The reason first: a message bound may cut the long path short.
		return fmt.Errorf("tree is nested deeper than %d directories at tree path %q", maxTreeDepth, dir)
	}
	for _, entry := range tree.Entries {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		name := path.Join(dir, entry.Name)
		if err := validEntryName(entry.Name); err != nil {
			return fmt.Errorf("tree path %q: %w", name, err)
		}
		if entry.Mode == filemode.Dir {
			// Not wrapped: the error from below names its own full path,
			// and wrapping at every level would repeat each parent.
			if err := w.writeDir(entry, name, depth); err != nil {
				return err
			}
			continue
		}
		if err := w.writeEntry(entry, name); err != nil {
			return fmt.Errorf("tree path %q: %w", name, err)
		}
	}
	return nil
}

func (w *treeWriter) writeDir(entry object.TreeEntry, name string, depth int) error {
	if err := w.root.Mkdir(name, 0o755); err != nil {
		return fmt.Errorf("tree path %q: %w", name, err)
	}
	sub, err := object.GetTree(w.storer, entry.Hash)
	if err != nil {
		return fmt.Errorf("tree path %q: reading tree %s: %w", name, entry.Hash, err)
	}
	return w.write(sub, name, depth+1)
}

func (w *treeWriter) writeEntry(entry object.TreeEntry, name string) error {
	switch entry.Mode {
	case filemode.Submodule:
		return w.root.Mkdir(name, 0o755)
	case filemode.Regular:
		return w.writeFile(entry.Hash, name, 0o644)
	case filemode.Executable:
		return w.writeFile(entry.Hash, name, 0o755)
	case filemode.Symlink:
		target, err := w.readSymlinkTarget(entry.Hash)
		if err != nil {
			return err
		}
		return w.root.Symlink(target, name)
	default:
		// Tree decoding canonicalises modes as Git does; only a malformed
		// entry gets here.
		return fmt.Errorf("unsupported file mode %o", uint32(entry.Mode))
	}
}

func (w *treeWriter) writeFile(hash plumbing.Hash, name string, perm os.FileMode) error {
	blob, err := object.GetBlob(w.storer, hash)
	if err != nil {
		return fmt.Errorf("reading blob %s: %w", hash, err)
	}
	src, err := blob.Reader()
	if err != nil {
		return fmt.Errorf("reading blob %s: %w", hash, err)
	}
	defer src.Close()
	dst, err := w.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		_ = dst.Close()
		return err
	}
	// The process umask must not change the mode Git recorded.
	if err := dst.Chmod(perm); err != nil {
		_ = dst.Close()
		return err
	}
	return dst.Close()
}

func (w *treeWriter) readSymlinkTarget(hash plumbing.Hash) (string, error) {
	blob, err := object.GetBlob(w.storer, hash)
	if err != nil {
		return "", fmt.Errorf("reading blob %s: %w", hash, err)
	}
	if blob.Size > maxSymlinkTarget {
		return "", fmt.Errorf("symlink target is longer than %d bytes", maxSymlinkTarget)
	}
	src, err := blob.Reader()
	if err != nil {
		return "", fmt.Errorf("reading blob %s: %w", hash, err)
	}
	defer src.Close()
	target, err := io.ReadAll(src)
	if err != nil {
		return "", fmt.Errorf("reading blob %s: %w", hash, err)
	}
	if len(target) == 0 || strings.ContainsRune(string(target), 0) {
		return "", errors.New("symlink target is empty or holds a NUL byte")
	}
	return string(target), nil
}

// validEntryName accepts one path element: never empty, absolute, ".", ".."
// or ".git", which Git itself refuses to check out.
func validEntryName(name string) error {
	switch {
	case name == "":
		return errors.New("empty name")
	case strings.ContainsAny(name, "/\x00"):
		return errors.New("name holds '/' or NUL, which would make it absolute or nested")
	case name == "." || name == "..":
		return fmt.Errorf("name %q leaves its directory", name)
	case strings.EqualFold(name, ".git"):
		return errors.New("name .git is reserved by Git")
	}
	return nil
}

// commitTree reads the tree of a commit the clone holds.
func commitTree(key RepoKey, repo *git.Repository, commit string) (*object.Tree, error) {
	obj, err := repo.CommitObject(plumbing.NewHash(strings.ToLower(commit)))
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return nil, fmt.Errorf("Repository %s: the clone does not hold commit %s yet; fetch it first: %w", key, commit, ErrNotFetched)
	}
	if err != nil {
		return nil, fmt.Errorf("Repository %s: commit %s: %w", key, commit, err)
	}
	tree, err := obj.Tree()
	if err != nil {
		return nil, fmt.Errorf("Repository %s: tree of commit %s: %w", key, commit, err)
	}
	return tree, nil
}
