package render

// Walking a directory of the repository in lexical order, following
// symlinks that stay inside and refusing cycles.

import (
	"errors"
	"io/fs"
	"path"
	"sort"
)

// walkFiles calls fn for every regular file under dir (repository-relative),
// directories in lexical order, following symlinks that stay inside the
// repository and refusing those that leave it. skip, when it returns true for
// a file or directory, leaves it out (a directory with everything below it).
func (r *repoFS) walkFiles(dir string, skip func(rel string, fi fs.FileInfo) bool, fn func(rel string) error) error {
	real, _, rel, err := r.resolve(dir)
	if err != nil {
		return err
	}
	return r.walkDir(rel, real, map[string]bool{}, skip, fn)
}

// walkDir walks the directory real, reached as rel. ancestors holds the real
// paths of the directories above, to refuse symlink cycles.
func (r *repoFS) walkDir(rel, real string, ancestors map[string]bool, skip func(string, fs.FileInfo) bool, fn func(string) error) error {
	if ancestors[real] {
		return validationFailure(rel, "symlink forms a directory cycle")
	}
	ancestors[real] = true
	defer delete(ancestors, real)

	realRel, _ := r.relOf(real)
	r.inputs.list(rel)
	r.inputs.list(realRel)
	f, err := r.dir.Open(osRel(realRel))
	if err != nil {
		return renderFailed(rel, "%w", r.scrubErr(err))
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return renderFailed(rel, "%w", r.scrubErr(err))
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	for _, entry := range entries {
		childRel := path.Join(rel, entry.Name())
		childReal, _, _, err := r.resolve(path.Join(realRel, entry.Name()))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return renderFailed(childRel, "symlink points to nothing")
			}
			return relabel(err, childRel)
		}
		childRealRel, _ := r.relOf(childReal)
		fi, err := r.dir.Stat(osRel(childRealRel))
		if err != nil {
			return renderFailed(childRel, "%w", r.scrubErr(err))
		}
		if skip != nil && skip(childRel, fi) {
			continue
		}
		switch {
		case fi.IsDir():
			if err := r.walkDir(childRel, childReal, ancestors, skip, fn); err != nil {
				return err
			}
		case fi.Mode().IsRegular():
			if err := fn(childRel); err != nil {
				return err
			}
		default:
			return renderFailed(childRel, "is not a regular file")
		}
	}
	return nil
}

// relabel names the file as the walk reached it rather than by its real path.
func relabel(err error, file string) error {
	var e *Error
	if errors.As(err, &e) {
		return &Error{Reason: e.Reason, File: file, Err: e.Err}
	}
	return err
}
