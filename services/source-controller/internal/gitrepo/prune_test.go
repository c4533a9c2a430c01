package gitrepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	testgit "github.com/kuvryn/kuvryn-sync/pkg/testkit/git"
)

func exists(t *testing.T, path string) bool {
	t.Helper()
	_, err := os.Lstat(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return err == nil
}

func TestPrune_RemovesUnreferencedCheckoutsAndClonesOfDeletedRepositories(t *testing.T) {
	srv := testgit.Start(t, testgit.Options{})
	repo := createRepo(t, srv, "app")
	c1 := commit(t, repo, map[string]string{"a": "1"})
	c2 := commit(t, repo, map[string]string{"a": "2"})
	kept, deleted := keyApp, RepoKey{Namespace: "team-b", Name: "gone"}
	cache := newCache(t)
	for _, key := range []RepoKey{kept, deleted} {
		mustFetch(t, cache, key, repo.URL(), nil, "main")
		mustCheckout(t, cache, key, c1)
		mustCheckout(t, cache, key, c2)
	}
	// A work directory an interrupted earlier process left behind.
	leftover := filepath.Join(cache.tmpDir(), "clone-123")
	if err := os.MkdirAll(filepath.Join(leftover, "objects"), 0o755); err != nil {
		t.Fatal(err)
	}
	keep := map[RepoKey]map[string]bool{kept: {c2: true}}
	existing := map[RepoKey]bool{kept: true}

	checkouts, clones, err := cache.Prune(context.Background(), keep, existing, time.Hour, time.Now())
	if err != nil || checkouts != 0 || clones != 0 {
		t.Fatalf("Prune of recently used entries = %d checkouts, %d clones, %v; want nothing removed", checkouts, clones, err)
	}
	if exists(t, leftover) {
		t.Error("the leftover work directory survived")
	}

	checkouts, clones, err = cache.Prune(context.Background(), keep, existing, time.Hour, time.Now().Add(2*time.Hour))
	if err != nil || checkouts != 3 || clones != 1 {
		t.Fatalf("Prune after an unused hour = %d checkouts, %d clones, %v; want 3 and 1", checkouts, clones, err)
	}
	for path, want := range map[string]bool{
		filepath.Join(cache.checkoutsDir(kept), c2):     true,
		filepath.Join(cache.checkoutsDir(kept), c1):     false,
		cache.cloneDir(kept):                            true,
		cache.cloneDir(deleted):                         false,
		cache.checkoutsDir(deleted):                     false,
		filepath.Join(cache.Dir, "repos", "team-b"):     false,
		filepath.Join(cache.Dir, "checkouts", "team-b"): false,
	} {
		if got := exists(t, path); got != want {
			t.Errorf("%s exists = %v, want %v", path, got, want)
		}
	}

	// A Repository created again under the same name clones afresh.
	if got := mustFetch(t, cache, deleted, repo.URL(), nil, "main"); got.Commit != c2 {
		t.Fatalf("Fetch after pruning = %+v, want %s", got, c2)
	}
}

func TestPrune_UseRefreshesLastUse(t *testing.T) {
	srv := testgit.Start(t, testgit.Options{})
	repo := createRepo(t, srv, "app")
	hash := commit(t, repo, map[string]string{"a": "1"})
	cache := newCache(t)
	mustFetch(t, cache, keyApp, repo.URL(), nil, "main")
	dir := mustCheckout(t, cache, keyApp, hash)

	old := time.Now().Add(-3 * time.Hour)
	for _, path := range []string{dir, filepath.Join(cache.cloneDir(keyApp), lastUsedFile)} {
		if err := os.Chtimes(path, old, old); err != nil {
			t.Fatal(err)
		}
	}
	// Checking out again marks both the checkout and the clone as used.
	mustCheckout(t, cache, keyApp, hash)

	checkouts, clones, err := cache.Prune(context.Background(), nil, nil, time.Hour, time.Now())
	if err != nil || checkouts != 0 || clones != 0 {
		t.Fatalf("Prune = %d checkouts, %d clones, %v; want recently used entries kept", checkouts, clones, err)
	}
	if !exists(t, dir) || !exists(t, cache.cloneDir(keyApp)) {
		t.Fatal("recently used entries were removed")
	}
}

func TestPrune_WaitsForOperationsOnTheSameRepository(t *testing.T) {
	srv := testgit.Start(t, testgit.Options{})
	repo := createRepo(t, srv, "app")
	hash := commit(t, repo, map[string]string{"a": "1"})
	cache := newCache(t)
	mustFetch(t, cache, keyApp, repo.URL(), nil, "main")
	dir := mustCheckout(t, cache, keyApp, hash)

	unlock, err := cache.lock(context.Background(), keyApp)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, _, err = cache.Prune(ctx, nil, nil, 0, time.Now().Add(time.Hour))
	unlock()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Prune while the Repository is busy: %v, want it to wait until its context ends", err)
	}
	if !exists(t, dir) || !exists(t, cache.cloneDir(keyApp)) {
		t.Fatal("Prune removed entries of a busy Repository")
	}
}
