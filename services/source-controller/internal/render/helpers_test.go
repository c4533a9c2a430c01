package render

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// symlinkPrefix marks a file in a test tree that is a symlink to the rest
// of the content.
const symlinkPrefix = "symlink:"

// writeTree writes files (slash paths to content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(content, symlinkPrefix); ok {
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// newRepo returns a repository checkout holding files, inside a parent
// directory that also holds outside (files beside the repository, for
// escapes: the repository is <parent>/repo, outside files are <parent>/...).
func newRepo(t *testing.T, files, outside map[string]string) (root, parent string) {
	t.Helper()
	parent = t.TempDir()
	root = filepath.Join(parent, "repo")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	writeTree(t, parent, outside)
	writeTree(t, root, files)
	return root, parent
}

// encrypt is what the test Decryptor decrypts: a marker around base64, so
// an encrypted manifest is not YAML until it is decrypted.
func encrypt(plain string) string {
	return "ENC[" + base64.StdEncoding.EncodeToString([]byte(plain)) + "]\n"
}

// testDecryptor records every path it is given and decrypts encrypt's
// output; with refuse set it fails on encrypted files like a Decryptor
// without keys.
type testDecryptor struct {
	refuse bool

	mu        sync.Mutex
	seen      []string
	decrypted []string
}

var errNoKeys = errors.New("file is encrypted and the Application has no decryption keys")

func (d *testDecryptor) Decrypt(path string, data []byte) ([]byte, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.seen = append(d.seen, path)
	trimmed := bytes.TrimSpace(data)
	if !bytes.HasPrefix(trimmed, []byte("ENC[")) || !bytes.HasSuffix(trimmed, []byte("]")) {
		return data, nil
	}
	if d.refuse {
		return nil, errNoKeys
	}
	plain, err := base64.StdEncoding.DecodeString(string(trimmed[4 : len(trimmed)-1]))
	if err != nil {
		return nil, err
	}
	d.decrypted = append(d.decrypted, path)
	return plain, nil
}

// seenPaths returns the distinct paths the Decryptor was given, sorted.
func (d *testDecryptor) seenPaths() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	set := map[string]bool{}
	for _, p := range d.seen {
		set[p] = true
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func mustRender(t *testing.T, req Request) []*unstructured.Unstructured {
	t.Helper()
	objs, err := Render(context.Background(), req)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return objs
}

// renderErr renders req, expecting an *Error with reason and a message
// containing every one of wants.
func renderErr(t *testing.T, req Request, reason string, wants ...string) *Error {
	t.Helper()
	_, err := Render(context.Background(), req)
	if err == nil {
		t.Fatalf("Render succeeded, want a %s error", reason)
	}
	t.Logf("%s: %v", reason, err)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("Render error %v (%T) is not an *Error", err, err)
	}
	if e.Reason != reason {
		t.Errorf("Reason = %s, want %s (error: %v)", e.Reason, reason, err)
	}
	for _, want := range wants {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	return e
}

// ids lists objects as "Kind namespace/name", in render order.
func ids(objs []*unstructured.Unstructured) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		id := o.GetKind() + " "
		if ns := o.GetNamespace(); ns != "" {
			id += ns + "/"
		}
		out = append(out, id+o.GetName())
	}
	return out
}

func find(t *testing.T, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("no %s %s among %v", kind, name, ids(objs))
	return nil
}

// assertNoPlaintextOnDisk fails if any file under dir contains secret.
func assertNoPlaintextOnDisk(t *testing.T, dir, secret string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink != 0 || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(data, []byte(secret)) {
			t.Errorf("plaintext found on disk in %s", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func assertEqual[T comparable](t *testing.T, what string, got, want []T) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s = %v, want %v", what, got, want)
		}
	}
}
