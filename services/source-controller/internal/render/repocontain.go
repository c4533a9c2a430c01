package render

// Containment: every path a render names resolves inside the repository,
// '..' and symlinks included, or is refused.

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// relOf returns the repository-relative, slash-separated form of abs, and
// whether abs is inside the repository at all.
func (r *repoFS) relOf(abs string) (string, bool) {
	rel, err := filepath.Rel(r.root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// resolve turns p (absolute, or relative to the repository) into the real,
// symlink-free path of what it names and that path relative to the
// repository, refusing anything outside. A missing file is an fs.ErrNotExist.
func (r *repoFS) resolve(p string) (real, realRel, rel string, err error) {
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(r.root, abs)
	}
	abs = filepath.Clean(abs)
	rel, ok := r.relOf(abs)
	if !ok {
		// Named relative to the repository, like every other path in messages.
		if up, err := filepath.Rel(r.root, abs); err == nil {
			p = filepath.ToSlash(up)
		}
		return "", "", "", r.refuse(validationFailure(p, "path is outside the repository"))
	}
	// Recorded before it is known to exist: a file a later commit adds
	// where the render looked for one changes what it renders.
	r.inputs.name(rel)
	real, err = filepath.EvalSymlinks(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			// A dangling link that climbs out of the repository is refused
			// for leaving it, not reported as pointing to nothing.
			if _, inside := r.relOf(danglingTarget(abs)); !inside {
				return "", "", rel, r.refuse(validationFailure(rel, "symlink leads outside the repository"))
			}
			return "", "", rel, &fs.PathError{Op: "open", Path: rel, Err: fs.ErrNotExist}
		}
		return "", "", rel, renderFailed(rel, "resolving path: %w", r.scrubErr(err))
	}
	realRel, ok = r.relOf(real)
	if !ok {
		return "", "", rel, r.refuse(validationFailure(rel, "symlink leads outside the repository"))
	}
	r.inputs.name(realRel)
	return real, realRel, rel, nil
}

// maxLinkHops bounds how many symlinks danglingTarget follows, as the
// kernel's ELOOP does.
const maxLinkHops = 40

// danglingTarget is where abs leads when something on the way does not
// exist: one component at a time, the symlinks that exist are followed as
// the kernel would, and the rest of the path is taken as written.
func danglingTarget(abs string) string {
	resolved := string(filepath.Separator)
	rest := strings.Split(abs, string(filepath.Separator))
	for hops := 0; len(rest) > 0; {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, c)
		target, err := os.Readlink(next)
		if err != nil {
			resolved = next
			continue
		}
		if hops++; hops > maxLinkHops {
			return next
		}
		if filepath.IsAbs(target) {
			resolved = string(filepath.Separator)
		}
		rest = append(strings.Split(target, string(filepath.Separator)), rest...)
	}
	return resolved
}
