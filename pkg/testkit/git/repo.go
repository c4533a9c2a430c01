package testgit

import (
	"bytes"
	"fmt"
	"net/url"
	"path"
	"sort"
	"strings"
	"sync"
	"time"
)

// Kind says what a Change does to its path.
type Kind int

const (
	// KindFile writes a regular file (mode 100644).
	KindFile Kind = iota
	// KindExecutable writes an executable file (mode 100755).
	KindExecutable
	// KindSymlink writes a symbolic link whose target is Content.
	KindSymlink
	// KindDelete removes a file, or every file under a directory.
	KindDelete
)

// Change is one edit of a commit made by Apply.
type Change struct {
	Path    string
	Content string
	Kind    Kind
}

// File writes a regular file.
func File(path, content string) Change { return Change{Path: path, Content: content, Kind: KindFile} }

// Executable writes a file with the executable bit.
func Executable(path, content string) Change {
	return Change{Path: path, Content: content, Kind: KindExecutable}
}

// Symlink writes a symbolic link to target; target is stored verbatim, so it
// may point outside the repository, as hostile-input tests need.
func Symlink(path, target string) Change {
	return Change{Path: path, Content: target, Kind: KindSymlink}
}

// Delete removes a file or a whole directory.
func Delete(path string) Change { return Change{Path: path, Kind: KindDelete} }

// Repo is a repository on a Server. Its methods are safe for concurrent use;
// each one is a push through the server.
type Repo struct {
	srv       *Server
	name      string
	servedDir string
	// clientDir is a bare repository that builds commits and pushes them,
	// the way a developer's clone would.
	clientDir string

	mu sync.Mutex
}

// Name is the name the repository was created with.
func (r *Repo) Name() string { return r.name }

// URL is the clone URL, without credentials.
func (r *Repo) URL() string { return r.srv.URL(r.name) }

// Commit writes files (path to content) as regular files in one commit on
// main and returns the commit hash.
func (r *Repo) Commit(files map[string]string, msg string) (string, error) {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	changes := make([]Change, 0, len(paths))
	for _, p := range paths {
		changes = append(changes, File(p, files[p]))
	}
	return r.Apply(DefaultBranch, msg, changes...)
}

// CommitSymlink commits a symbolic link at path pointing to target on main.
func (r *Repo) CommitSymlink(path, target, msg string) (string, error) {
	return r.Apply(DefaultBranch, msg, Symlink(path, target))
}

// Remove deletes files or directories in one commit on main.
func (r *Repo) Remove(msg string, paths ...string) (string, error) {
	changes := make([]Change, 0, len(paths))
	for _, p := range paths {
		changes = append(changes, Delete(p))
	}
	return r.Apply(DefaultBranch, msg, changes...)
}

// Apply makes one commit on branch holding changes, in order, and pushes it.
// A branch that does not exist yet starts from main, or from nothing when
// main does not exist either. It returns the commit hash.
func (r *Repo) Apply(branch, msg string, changes ...Change) (string, error) {
	if err := r.checkRef("refs/heads/" + branch); err != nil {
		return "", err
	}
	r.mu.Lock()
	defer r.mu.Unlock()

	if err := r.fetch(); err != nil {
		return "", err
	}
	base, err := r.remoteTip(branch)
	if err != nil {
		return "", err
	}
	if base == "" && branch != DefaultBranch {
		if base, err = r.remoteTip(DefaultBranch); err != nil {
			return "", err
		}
	}
	script, err := importScript(base, msg, changes)
	if err != nil {
		return "", fmt.Errorf("committing to %s on repository %q: %w", branch, r.name, err)
	}

	const importRef = "refs/testgit/import"
	if _, err := r.srv.runGit(nil, "-C", r.clientDir, "update-ref", "-d", importRef); err != nil {
		return "", err
	}
	if _, err := r.srv.runGit(script, "-C", r.clientDir, "fast-import", "--quiet", "--force"); err != nil {
		return "", fmt.Errorf("committing to %s on repository %q: %w", branch, r.name, err)
	}
	commit, err := r.srv.runGit(nil, "-C", r.clientDir, "rev-parse", "--verify", importRef+"^{commit}")
	if err != nil {
		return "", err
	}
	if err := r.push(commit + ":refs/heads/" + branch); err != nil {
		return "", err
	}
	return commit, nil
}

// Branch points branch at commit, creating or force-moving it.
func (r *Repo) Branch(name, commit string) error {
	if err := r.checkRef("refs/heads/" + name); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.fetch(); err != nil {
		return err
	}
	return r.push("+" + commit + ":refs/heads/" + name)
}

// SetRef points any ref, such as refs/pull/12/head, at commit, creating
// or force-moving it, as a Git host does for the head of a pull request.
// commit must be one this Repo made.
func (r *Repo) SetRef(ref, commit string) error {
	if err := r.checkRef(ref); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.push("+" + commit + ":" + ref)
}

// Tag points a lightweight tag at commit, creating or force-moving it.
func (r *Repo) Tag(name, commit string) error {
	if err := r.checkRef("refs/tags/" + name); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.fetch(); err != nil {
		return err
	}
	return r.push("+" + commit + ":refs/tags/" + name)
}

// AnnotatedTag creates (or replaces) an annotated tag object for commit and
// returns the tag object's hash, which differs from the commit's.
func (r *Repo) AnnotatedTag(name, commit, msg string) (string, error) {
	ref := "refs/tags/" + name
	if err := r.checkRef(ref); err != nil {
		return "", err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.fetch(); err != nil {
		return "", err
	}
	if _, err := r.srv.runGit(nil, "-C", r.clientDir, "tag", "--force", "--annotate", "--message", msg, name, commit); err != nil {
		return "", fmt.Errorf("tagging %s in repository %q: %w", commit, r.name, err)
	}
	tag, err := r.srv.runGit(nil, "-C", r.clientDir, "rev-parse", "--verify", ref)
	if err != nil {
		return "", err
	}
	return tag, r.push("+" + ref + ":" + ref)
}

// DeleteRef deletes a branch or tag given by its full name, such as
// refs/heads/feature or refs/tags/v1.
func (r *Repo) DeleteRef(ref string) error {
	if err := r.checkRef(ref); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.push(":" + ref)
}

// Head returns the commit a branch points to on the server.
func (r *Repo) Head(branch string) (string, error) {
	if err := r.checkRef("refs/heads/" + branch); err != nil {
		return "", err
	}
	commit, err := r.srv.runGit(nil, "-C", r.servedDir, "rev-parse", "--verify", "refs/heads/"+branch+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("branch %q of repository %q: %w", branch, r.name, err)
	}
	return commit, nil
}

func (r *Repo) checkRef(ref string) error {
	if _, err := r.srv.runGit(nil, "check-ref-format", ref); err != nil {
		return fmt.Errorf("ref %q is not a valid Git reference name", ref)
	}
	return nil
}

// fetch mirrors the server's branches into refs/remotes/origin, through HTTP.
func (r *Repo) fetch() error {
	if _, err := r.srv.runGit(nil, "-C", r.clientDir, "fetch", "--quiet", "--prune", "--no-tags",
		r.pushURL(), "+refs/heads/*:refs/remotes/origin/*"); err != nil {
		return fmt.Errorf("fetching repository %q: %w", r.name, err)
	}
	return nil
}

func (r *Repo) push(refspec string) error {
	if _, err := r.srv.runGit(nil, "-C", r.clientDir, "push", "--quiet", r.pushURL(), refspec); err != nil {
		return fmt.Errorf("pushing %s to repository %q: %w", refspec, r.name, err)
	}
	return nil
}

// remoteTip is the fetched commit of a branch, or "" when it does not exist.
func (r *Repo) remoteTip(branch string) (string, error) {
	out, err := r.srv.runGit(nil, "-C", r.clientDir, "for-each-ref", "--format=%(objectname)", "refs/remotes/origin/"+branch)
	if err != nil {
		return "", err
	}
	first, _, _ := strings.Cut(out, "\n")
	return first, nil
}

// pushURL carries the server's credentials so git authenticates after the
// server's 401 challenge without any credential helper.
func (r *Repo) pushURL() string {
	if r.srv.opts.Username == "" {
		return r.URL()
	}
	u, err := url.Parse(r.URL())
	if err != nil {
		return r.URL()
	}
	u.User = url.UserPassword(r.srv.opts.Username, r.srv.opts.Password)
	return u.String()
}

// importScript is a git fast-import stream for one commit on top of base.
func importScript(base, msg string, changes []Change) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("commit refs/testgit/import\n")
	fmt.Fprintf(&b, "committer Testgit <testgit@example.com> %d +0000\n", time.Now().Unix())
	writeData(&b, msg)
	if base != "" {
		fmt.Fprintf(&b, "from %s\n", base)
	}
	for _, c := range changes {
		if err := validPath(c.Path); err != nil {
			return nil, err
		}
		switch c.Kind {
		case KindFile:
			fmt.Fprintf(&b, "M 100644 inline %s\n", c.Path)
		case KindExecutable:
			fmt.Fprintf(&b, "M 100755 inline %s\n", c.Path)
		case KindSymlink:
			fmt.Fprintf(&b, "M 120000 inline %s\n", c.Path)
		case KindDelete:
			fmt.Fprintf(&b, "D %s\n", c.Path)
			continue
		default:
			return nil, fmt.Errorf("change of %q has unknown kind %d", c.Path, c.Kind)
		}
		writeData(&b, c.Content)
	}
	b.WriteString("\n")
	return b.Bytes(), nil
}

func writeData(b *bytes.Buffer, data string) {
	fmt.Fprintf(b, "data %d\n%s\n", len(data), data)
}

// validPath refuses what fast-import would need quoting for or what Git
// itself would refuse; hostile trees are built with other tools.
func validPath(p string) error {
	switch {
	case p == "" || strings.HasPrefix(p, "/") || path.Clean(p) != p:
		return fmt.Errorf("path %q must be a clean relative path", p)
	case strings.ContainsAny(p, "\n\x00") || strings.HasPrefix(p, `"`):
		return fmt.Errorf("path %q holds a newline, NUL or leading quote", p)
	case p == ".." || strings.HasPrefix(p, "../"):
		return fmt.Errorf("path %q leaves the repository", p)
	}
	return nil
}
