package render

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/kustomize/kyaml/filesys"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// MaxInputBytes caps what one render reads: repository files, chart files
// and the unpacked content of vendored chart archives together. A chart
// whose archives unpack far larger than they are packed stops here.
const MaxInputBytes = 64 << 20

// repoFS is the only way a render reaches the checked-out repository. Every
// path resolves inside the repository: absolute paths elsewhere, '..' past
// the top and symlinks leading out are refused, and the files themselves are
// read through an os.Root, which refuses escapes on its own as well. Every
// file read through ReadFile or Open passes the Decryptor in memory. Writes
// are refused. repoFS is the kyaml FileSystem Kustomize builds on.
type repoFS struct {
	// root is the absolute, symlink-free path of the repository.
	root    string
	dir     *os.Root
	decrypt Decryptor
	secrets *redactor
	// budget is what is left of MaxInputBytes.
	budget int64
	// refusal is the first containment, remote-reference or decryption error
	// met. Kustomize wraps or swallows the errors of its file system, so the
	// render reports this one instead of whatever Kustomize made of it.
	refusal *Error
}

var _ filesys.FileSystem = (*repoFS)(nil)

func openRepo(root string, decrypt Decryptor, secrets *redactor) (*repoFS, error) {
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, renderFailed("", "opening the repository checkout: %w", err)
	}
	dir, err := os.OpenRoot(real)
	if err != nil {
		return nil, renderFailed("", "opening the repository checkout: %w", err)
	}
	return &repoFS{root: real, dir: dir, decrypt: decrypt, secrets: secrets, budget: MaxInputBytes}, nil
}

func (r *repoFS) Close() error { return r.dir.Close() }

// refuse records the first refusal and returns err.
func (r *repoFS) refuse(err *Error) *Error {
	if r.refusal == nil {
		r.refusal = err
	}
	return err
}

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

// scrubErr hides local directories in errors from the os package.
func (r *repoFS) scrubErr(err error) error {
	return &scrubbedError{msg: r.secrets.scrub(err.Error()), err: err}
}

// stat returns what p names, following symlinks that stay in the repository.
func (r *repoFS) stat(p string) (fs.FileInfo, string, error) {
	_, realRel, rel, err := r.resolve(p)
	if err != nil {
		return nil, rel, err
	}
	fi, err := r.dir.Stat(osRel(realRel))
	if err != nil {
		return nil, rel, renderFailed(rel, "%w", r.scrubErr(err))
	}
	return fi, rel, nil
}

// readRaw reads the file p names as it is in the repository, without
// decrypting it, and counts it against the budget.
func (r *repoFS) readRaw(p string) (data []byte, rel string, err error) {
	_, realRel, rel, err := r.resolve(p)
	if err != nil {
		return nil, rel, err
	}
	f, err := r.dir.Open(osRel(realRel))
	if err != nil {
		return nil, rel, renderFailed(rel, "%w", r.scrubErr(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, rel, renderFailed(rel, "%w", r.scrubErr(err))
	}
	if fi.IsDir() {
		return nil, rel, renderFailed(rel, "is a directory, not a file")
	}
	if !fi.Mode().IsRegular() {
		return nil, rel, renderFailed(rel, "is not a regular file")
	}
	if err := r.spend(rel, fi.Size()); err != nil {
		return nil, rel, err
	}
	// The file may grow between Stat and read; never read past the budget.
	data, err = io.ReadAll(io.LimitReader(f, r.budget+fi.Size()+1))
	if err != nil {
		return nil, rel, renderFailed(rel, "%w", r.scrubErr(err))
	}
	if err := r.spend(rel, int64(len(data))-fi.Size()); err != nil {
		return nil, rel, err
	}
	return data, rel, nil
}

// spend takes n bytes from the budget, failing once the render has read more
// than MaxInputBytes.
func (r *repoFS) spend(file string, n int64) error {
	if n > r.budget {
		return renderFailed(file, "reading it takes the render past %d bytes of input", MaxInputBytes)
	}
	r.budget -= n
	return nil
}

// readFile reads the file p names and passes it through the Decryptor;
// decrypted says the Decryptor changed it. Decrypted content is remembered
// so that no error repeats it.
func (r *repoFS) readFile(p string) (data []byte, rel string, decrypted bool, err error) {
	raw, rel, err := r.readRaw(p)
	if err != nil {
		return nil, rel, false, err
	}
	plain, err := r.decrypt.Decrypt(rel, raw)
	if err != nil {
		return nil, rel, false, r.refuse(&Error{Reason: syncv1.ReasonDecryptionFailed, File: rel, Err: err})
	}
	decrypted = !bytes.Equal(plain, raw)
	if decrypted {
		r.secrets.addDocument(plain)
	}
	return plain, rel, decrypted, nil
}

// consume reads rd (the unpacked content of an archive) into memory,
// counting it against the budget.
func (r *repoFS) consume(file string, rd io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(rd, r.budget+1))
	if err != nil {
		return nil, renderFailed(file, "%w", err)
	}
	if err := r.spend(file, int64(len(data))); err != nil {
		return nil, renderFailed(file, "unpacking it takes the render past %d bytes of input", MaxInputBytes)
	}
	return data, nil
}

// osRel turns a repository-relative slash path into what os.Root expects.
func osRel(rel string) string {
	if rel == "" {
		return "."
	}
	return filepath.FromSlash(rel)
}

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

// kyaml filesys.FileSystem. Paths Kustomize passes are absolute.

func (r *repoFS) readOnly(p string) error {
	return fmt.Errorf("%s: the repository is read-only during a render", p)
}

func (r *repoFS) Create(p string) (filesys.File, error) { return nil, r.readOnly(p) }
func (r *repoFS) Mkdir(p string) error                  { return r.readOnly(p) }
func (r *repoFS) MkdirAll(p string) error               { return r.readOnly(p) }
func (r *repoFS) RemoveAll(p string) error              { return r.readOnly(p) }
func (r *repoFS) WriteFile(p string, _ []byte) error    { return r.readOnly(p) }

func (r *repoFS) Open(p string) (filesys.File, error) {
	data, rel, err := r.ReadFileRel(p)
	if err != nil {
		return nil, err
	}
	return &memFile{Reader: bytes.NewReader(data), info: memFileInfo{name: path.Base(rel), size: int64(len(data))}}, nil
}

func (r *repoFS) IsDir(p string) bool {
	fi, _, err := r.stat(p)
	return err == nil && fi.IsDir()
}

func (r *repoFS) ReadDir(p string) ([]string, error) {
	_, realRel, _, err := r.resolve(p)
	if err != nil {
		return nil, err
	}
	f, err := r.dir.Open(osRel(realRel))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	return names, nil
}

func (r *repoFS) CleanedAbs(p string) (filesys.ConfirmedDir, string, error) {
	real, realRel, _, err := r.resolve(p)
	if err != nil {
		return "", "", err
	}
	fi, err := r.dir.Stat(osRel(realRel))
	if err != nil {
		return "", "", err
	}
	if fi.IsDir() {
		return filesys.ConfirmedDir(real), "", nil
	}
	return filesys.ConfirmedDir(filepath.Dir(real)), filepath.Base(real), nil
}

func (r *repoFS) Exists(p string) bool {
	_, _, err := r.stat(p)
	return err == nil
}

func (r *repoFS) Glob(pattern string) ([]string, error) {
	abs := pattern
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(r.root, abs)
	}
	rel, ok := r.relOf(filepath.Clean(abs))
	if !ok {
		return nil, r.refuse(validationFailure(pattern, "pattern is outside the repository"))
	}
	matches, err := fs.Glob(r.dir.FS(), rel)
	if err != nil {
		return nil, err
	}
	for i, m := range matches {
		matches[i] = filepath.Join(r.root, filepath.FromSlash(m))
	}
	return matches, nil
}

// ReadFile reads a file for Kustomize: decrypted, and with Kustomize's own
// configuration checked for remote references before Kustomize acts on it.
func (r *repoFS) ReadFile(p string) ([]byte, error) {
	data, _, err := r.ReadFileRel(p)
	return data, err
}

// ReadFileRel is ReadFile that also returns the repository-relative path.
func (r *repoFS) ReadFileRel(p string) ([]byte, string, error) {
	data, rel, _, err := r.readFile(p)
	if err != nil {
		return nil, rel, err
	}
	if err := checkKustomizeFile(rel, data); err != nil {
		return nil, rel, r.refuse(err)
	}
	return data, rel, nil
}

func (r *repoFS) Walk(p string, walkFn filepath.WalkFunc) error {
	_, realRel, _, err := r.resolve(p)
	if err != nil {
		return err
	}
	return fs.WalkDir(r.dir.FS(), filepath.ToSlash(osRel(realRel)), func(name string, d fs.DirEntry, err error) error {
		abs := filepath.Join(r.root, filepath.FromSlash(name))
		if err != nil {
			return walkFn(abs, nil, err)
		}
		fi, err := d.Info()
		return walkFn(abs, fi, err)
	})
}

// memFile is a file already read (and decrypted) into memory; Kustomize
// gets it from Open. Writes are refused like every other write.
type memFile struct {
	*bytes.Reader
	info memFileInfo
}

func (f *memFile) Write([]byte) (int, error) {
	return 0, errors.New("the repository is read-only during a render")
}
func (f *memFile) Close() error               { return nil }
func (f *memFile) Stat() (os.FileInfo, error) { return f.info, nil }

type memFileInfo struct {
	name string
	size int64
}

func (i memFileInfo) Name() string       { return i.name }
func (i memFileInfo) Size() int64        { return i.size }
func (i memFileInfo) Mode() fs.FileMode  { return 0o444 }
func (i memFileInfo) ModTime() time.Time { return time.Time{} }
func (i memFileInfo) IsDir() bool        { return false }
func (i memFileInfo) Sys() any           { return nil }
