package render

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// outsideSecret is the content of the files beside the repository that no
// path may reach.
const outsideSecret = "OUTSIDE-THE-REPOSITORY"

// passThrough is a Decryptor for repositories without encrypted files.
type passThrough struct{}

func (passThrough) Decrypt(_ string, data []byte) ([]byte, error) { return data, nil }

// FuzzRepoFS_Resolve names arbitrary paths, relative and absolute (as
// Kustomize passes them), in a checkout with symlinks that stay inside and
// symlinks that lead out. Whatever the path, what is resolved, read, listed
// or globbed lies inside the repository, and reaching outside is refused
// as a ValidationFailure, never answered with the outside content.
func FuzzRepoFS_Resolve(f *testing.F) {
	parent := f.TempDir()
	root := filepath.Join(parent, "repo")
	for name, content := range map[string]string{
		"secret.txt":         outsideSecret,
		"outside/secret.txt": outsideSecret,
		"repo/app/cm.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
		"repo/app/sub/x.txt": "inside",
	} {
		p := filepath.Join(parent, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			f.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"repo/in":           "app/cm.yaml",
		"repo/indir":        "app",
		"repo/app/up":       "..",
		"repo/out":          "../secret.txt",
		"repo/outdir":       "../outside",
		"repo/abs":          filepath.Join(parent, "secret.txt"),
		"repo/app/sub/deep": "../../../outside/secret.txt",
		"repo/loop":         "loop",
		"repo/dangling":     "nowhere",
	} {
		if err := os.Symlink(target, filepath.Join(parent, filepath.FromSlash(link))); err != nil {
			f.Fatal(err)
		}
	}
	for _, s := range []string{
		"", ".", "app/cm.yaml", "in", "indir/sub/x.txt", "app/up/app/cm.yaml", "out", "outdir/secret.txt",
		"abs", "app/sub/deep", "loop", "dangling", "../secret.txt", "app/../../secret.txt", "/etc/passwd",
		"app//sub/./x.txt", "..", "app/up/../secret.txt", "*", "../*", "outdir/*", "[", "\x00",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, p string, absolute bool) {
		repo, err := openRepo(root, passThrough{}, newRedactor(root))
		if err != nil {
			t.Fatal(err)
		}
		defer repo.Close()
		if absolute {
			p = repo.root + string(filepath.Separator) + p
		}
		inside := func(what, got string) {
			t.Helper()
			if _, ok := repo.relOf(got); !ok {
				t.Fatalf("%s(%q) = %q, outside the repository %s", what, p, got, repo.root)
			}
		}
		refusedProperly := func(what string, err error) {
			t.Helper()
			var e *Error
			if errors.As(err, &e) && strings.Contains(e.Error(), parent) {
				t.Fatalf("%s(%q): error %q names a local directory", what, p, e)
			}
		}

		real, realRel, _, err := repo.resolve(p)
		if err == nil {
			inside("resolve", real)
			if strings.HasPrefix(realRel, "..") || filepath.IsAbs(realRel) {
				t.Fatalf("resolve(%q) relative path %q", p, realRel)
			}
		} else {
			refusedProperly("resolve", err)
			var e *Error
			if errors.As(err, &e) && e.Reason != syncv1.ReasonValidationFailure && e.Reason != syncv1.ReasonRenderFailed {
				t.Fatalf("resolve(%q): reason %s", p, e.Reason)
			}
		}

		if data, err := repo.ReadFile(p); err == nil {
			if bytes.Contains(data, []byte(outsideSecret)) {
				t.Fatalf("ReadFile(%q) returned a file outside the repository", p)
			}
		} else {
			refusedProperly("ReadFile", err)
		}
		if dir, file, err := repo.CleanedAbs(p); err == nil {
			inside("CleanedAbs", filepath.Join(string(dir), file))
		}
		if matches, err := repo.Glob(p); err == nil {
			for _, m := range matches {
				inside("Glob", m)
			}
		}
		err = repo.walkFiles(p, nil, func(rel string) error {
			data, _, err := repo.readRaw(rel)
			if err != nil {
				return err
			}
			if bytes.Contains(data, []byte(outsideSecret)) {
				t.Fatalf("walk from %q read %s, a file outside the repository", p, rel)
			}
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			refusedProperly("walkFiles", err)
		}
	})
}
