package render

// repoFS as the kyaml filesys.FileSystem Kustomize builds on: reads are
// decrypted and checked for remote references, writes are refused. Paths
// Kustomize passes are absolute.

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/kustomize/kyaml/filesys"
)

var _ filesys.FileSystem = (*repoFS)(nil)

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
	_, realRel, rel, err := r.resolve(p)
	if err != nil {
		return nil, err
	}
	r.inputs.list(rel)
	r.inputs.list(realRel)
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
	r.inputs.list(globBase(rel))
	matches, err := fs.Glob(r.dir.FS(), rel)
	if err != nil {
		return nil, err
	}
	for i, m := range matches {
		matches[i] = filepath.Join(r.root, filepath.FromSlash(m))
	}
	return matches, nil
}

// globBase is the directory above pattern's first wildcard: everything a
// glob can match lies below it.
func globBase(pattern string) string {
	segs := strings.Split(pattern, "/")
	for i, seg := range segs {
		if strings.ContainsAny(seg, `*?[\`) {
			return path.Join(append([]string{"."}, segs[:i]...)...)
		}
	}
	return path.Dir(pattern)
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
	_, realRel, rel, err := r.resolve(p)
	if err != nil {
		return err
	}
	r.inputs.list(rel)
	r.inputs.list(realRel)
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
