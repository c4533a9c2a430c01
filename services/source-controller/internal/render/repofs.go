package render

// The repository's file system as renders read it: opening the checkout,
// reading files raw or decrypted, and remembering the first refusal.

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

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
	// inputs, when set, records every path the render asks for.
	inputs *Inputs
}

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

// osRel turns a repository-relative slash path into what os.Root expects.
func osRel(rel string) string {
	if rel == "" {
		return "."
	}
	return filepath.FromSlash(rel)
}
