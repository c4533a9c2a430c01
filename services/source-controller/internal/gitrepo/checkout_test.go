package gitrepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	testgit "github.com/kuvryn/kuvryn-sync/pkg/testkit/git"
)

func TestCheckout_WritesContentModesAndSymlinks(t *testing.T) {
	srv := testgit.Start(t, testgit.Options{})
	repo := createRepo(t, srv, "app")
	first := apply(t, repo, "main",
		testgit.File("apps/deploy.yaml", "kind: Deployment\n"),
		testgit.File("gone.yaml", "kind: ConfigMap\n"),
		testgit.Executable("bin/run.sh", "#!/bin/sh\n"),
		testgit.Symlink("apps/link.yaml", "deploy.yaml"),
		testgit.Symlink("escape", "../../../etc/passwd"),
	)
	second := apply(t, repo, "main", testgit.Delete("gone.yaml"))
	cache := newCache(t)
	mustFetch(t, cache, keyApp, repo.URL(), nil, "main")

	dir := mustCheckout(t, cache, keyApp, first)
	if want := filepath.Join(cache.Dir, "checkouts", "team-a", "app", first); dir != want {
		t.Fatalf("Checkout dir = %s, want %s", dir, want)
	}
	for _, tc := range []struct {
		path    string
		mode    os.FileMode
		content string
		target  string
	}{
		{path: "apps/deploy.yaml", mode: 0o644, content: "kind: Deployment\n"},
		{path: "gone.yaml", mode: 0o644, content: "kind: ConfigMap\n"},
		{path: "bin/run.sh", mode: 0o755, content: "#!/bin/sh\n"},
		{path: "apps/link.yaml", mode: os.ModeSymlink, target: "deploy.yaml"},
		{path: "escape", mode: os.ModeSymlink, target: "../../../etc/passwd"},
	} {
		info, err := os.Lstat(filepath.Join(dir, tc.path))
		if err != nil {
			t.Errorf("%s: %v", tc.path, err)
			continue
		}
		if tc.mode == os.ModeSymlink {
			target, err := os.Readlink(filepath.Join(dir, tc.path))
			if info.Mode()&os.ModeSymlink == 0 || err != nil || target != tc.target {
				t.Errorf("%s: mode %v, target %q (%v); want a symlink to %q", tc.path, info.Mode(), target, err, tc.target)
			}
			continue
		}
		if info.Mode() != tc.mode {
			t.Errorf("%s: mode %v, want %v", tc.path, info.Mode(), tc.mode)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, tc.path)); string(got) != tc.content {
			t.Errorf("%s: content %q, want %q", tc.path, got, tc.content)
		}
	}

	later := mustCheckout(t, cache, keyApp, second)
	if _, err := os.Lstat(filepath.Join(later, "gone.yaml")); !os.IsNotExist(err) {
		t.Errorf("deleted file present in the later checkout: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "gone.yaml")); err != nil {
		t.Errorf("the earlier checkout lost its file: %v", err)
	}
	if again := mustCheckout(t, cache, keyApp, first); again != dir {
		t.Errorf("second Checkout = %s, want %s", again, dir)
	}
}

func TestCheckout_ConcurrentCallsShareOneCompleteTree(t *testing.T) {
	srv := testgit.Start(t, testgit.Options{})
	repo := createRepo(t, srv, "app")
	files := map[string]string{}
	for i := range 50 {
		files[filepath.Join("dir", strings.Repeat("f", i+1))] = strings.Repeat("x", i)
	}
	hash := commit(t, repo, files)
	cache := newCache(t)
	mustFetch(t, cache, keyApp, repo.URL(), nil, "main")

	const callers = 8
	dirs := make([]string, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			dirs[i], errs[i] = cache.Checkout(context.Background(), keyApp, hash)
		})
	}
	wg.Wait()
	for i := range callers {
		if errs[i] != nil || dirs[i] != dirs[0] {
			t.Fatalf("caller %d: %s, %v; want %s", i, dirs[i], errs[i], dirs[0])
		}
	}
	entries, err := os.ReadDir(filepath.Join(dirs[0], "dir"))
	if err != nil || len(entries) != len(files) {
		t.Fatalf("checkout holds %d files (%v), want %d", len(entries), err, len(files))
	}
	if leftovers, _ := os.ReadDir(cache.tmpDir()); len(leftovers) != 0 {
		t.Fatalf("work directories left behind: %v", leftovers)
	}
}

func TestCheckout_RefusesBadInput(t *testing.T) {
	srv := testgit.Start(t, testgit.Options{})
	repo := createRepo(t, srv, "app")
	commit(t, repo, map[string]string{"a": "1"})
	cache := newCache(t)

	if _, err := cache.Checkout(context.Background(), keyApp, strings.Repeat("ab", 20)); !errors.Is(err, ErrNotFetched) || !strings.Contains(err.Error(), "fetch it first") {
		t.Fatalf("Checkout before Fetch: %v, want ErrNotFetched", err)
	}
	mustFetch(t, cache, keyApp, repo.URL(), nil, "main")
	if _, err := cache.Checkout(context.Background(), keyApp, strings.Repeat("ab", 20)); !errors.Is(err, ErrNotFetched) {
		t.Fatalf("Checkout of a commit the clone lacks: %v, want ErrNotFetched", err)
	}
	for _, tc := range []struct {
		name, commit, wantMsg string
	}{
		{"path instead of a commit", "../../../../etc", "not a full commit hash"},
		{"short commit", "abcdef1", "not a full commit hash"},
		{"commit not fetched", strings.Repeat("ab", 20), "Repository team-a/app: the clone does not hold commit " + strings.Repeat("ab", 20)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cache.Checkout(context.Background(), keyApp, tc.commit)
			if err == nil || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Fatalf("Checkout(%q) error = %v, want it to contain %q", tc.commit, err, tc.wantMsg)
			}
		})
	}
}

// Git refuses to create these trees, so they are written straight into the
// clone's object store, as a hostile server could send them.
func TestCheckout_RefusesHostileTrees(t *testing.T) {
	srv := testgit.Start(t, testgit.Options{})
	repo := createRepo(t, srv, "app")
	commit(t, repo, map[string]string{"a": "1"})
	cache := newCache(t)
	mustFetch(t, cache, keyApp, repo.URL(), nil, "main")
	clone, err := git.PlainOpen(cache.cloneDir(keyApp))
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	blob := storeBlob(t, clone, "pwned\n")
	pwnedTree := storeTree(t, clone, rawEntry{filemode.Regular, "pwned", blob})

	for _, tc := range []struct {
		name    string
		entries []rawEntry
		wantMsg string
	}{
		{"dot-dot file", []rawEntry{{filemode.Regular, "..", blob}}, `".." leaves its directory`},
		{"dot-dot directory", []rawEntry{{filemode.Dir, "..", pwnedTree}}, `".." leaves its directory`},
		{"absolute name", []rawEntry{{filemode.Regular, outside + "/pwned", blob}}, "would make it absolute or nested"},
		{"nested name", []rawEntry{{filemode.Regular, "a/../../pwned", blob}}, "would make it absolute or nested"},
		{".git directory", []rawEntry{{filemode.Dir, ".GIT", pwnedTree}}, "reserved by Git"},
		{"directory through an earlier symlink", []rawEntry{
			{filemode.Symlink, "evil", storeBlob(t, clone, outside)},
			{filemode.Dir, "evil", pwnedTree},
		}, "file exists"},
		{"file over an earlier symlink", []rawEntry{
			{filemode.Symlink, "pwned", storeBlob(t, clone, filepath.Join(outside, "pwned"))},
			{filemode.Regular, "pwned", blob},
		}, "file exists"},
		{"duplicate file", []rawEntry{
			{filemode.Regular, "a", blob},
			{filemode.Regular, "a", blob},
		}, "file exists"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hostile := storeCommit(t, clone, storeTree(t, clone, tc.entries...))
			_, err := cache.Checkout(context.Background(), keyApp, hostile)
			if err == nil || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Fatalf("Checkout error = %v, want it to contain %q", err, tc.wantMsg)
			}
			if _, err := os.Lstat(filepath.Join(outside, "pwned")); !os.IsNotExist(err) {
				t.Fatalf("a file was written outside the checkout: %v", err)
			}
			if _, err := os.Lstat(filepath.Join(cache.checkoutsDir(keyApp), hostile)); !os.IsNotExist(err) {
				t.Fatalf("a refused checkout was kept: %v", err)
			}
			if leftovers, _ := os.ReadDir(cache.tmpDir()); len(leftovers) != 0 {
				t.Fatalf("work directories left behind: %v", leftovers)
			}
		})
	}
}

func TestCheckout_SubmoduleBecomesEmptyDirectory(t *testing.T) {
	srv := testgit.Start(t, testgit.Options{})
	repo := createRepo(t, srv, "app")
	commit(t, repo, map[string]string{"a": "1"})
	cache := newCache(t)
	mustFetch(t, cache, keyApp, repo.URL(), nil, "main")
	clone, err := git.PlainOpen(cache.cloneDir(keyApp))
	if err != nil {
		t.Fatal(err)
	}
	withSubmodule := storeCommit(t, clone, storeTree(t, clone,
		rawEntry{filemode.Submodule, "vendor", plumbing.NewHash(strings.Repeat("cd", 20))}))

	dir := mustCheckout(t, cache, keyApp, withSubmodule)
	entries, err := os.ReadDir(filepath.Join(dir, "vendor"))
	if err != nil || len(entries) != 0 {
		t.Fatalf("submodule: %v entries, %v; want an empty directory", entries, err)
	}
}
