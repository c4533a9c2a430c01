package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	testgit "github.com/kuvryn/kuvryn-sync/pkg/testkit/git"
)

func TestChangedPaths_NamesEveryFileACommitAddsChangesMovesOrDeletes(t *testing.T) {
	srv := testgit.Start(t, testgit.Options{})
	repo := createRepo(t, srv, "app")
	base := apply(t, repo, "main",
		testgit.File("apps/a/deploy.yaml", "a: 1\n"),
		testgit.File("apps/b/deploy.yaml", "b: 1\n"),
		testgit.File("apps/c/old.yaml", "c: 1\n"),
		testgit.File("apps/d/cm.yaml", "d: 1\n"),
		testgit.File("README.md", "readme\n"),
	)
	for i, tc := range []struct {
		name    string
		changes []testgit.Change
		want    []string
	}{
		{name: "modified", changes: []testgit.Change{testgit.File("apps/a/deploy.yaml", "a: 2\n")},
			want: []string{"apps/a/deploy.yaml"}},
		{name: "added", changes: []testgit.Change{testgit.File("apps/e/new.yaml", "e: 1\n")},
			want: []string{"apps/e/new.yaml"}},
		{name: "deleted", changes: []testgit.Change{testgit.Delete("apps/d")},
			want: []string{"apps/d/cm.yaml"}},
		{name: "moved, both names", changes: []testgit.Change{testgit.Delete("apps/c/old.yaml"), testgit.File("apps/f/old.yaml", "c: 1\n")},
			want: []string{"apps/c/old.yaml", "apps/f/old.yaml"}},
		{name: "made executable", changes: []testgit.Change{testgit.Executable("apps/b/deploy.yaml", "b: 1\n")},
			want: []string{"apps/b/deploy.yaml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A new branch starts from main, which stays at base.
			next := apply(t, repo, fmt.Sprintf("case-%d", i), tc.changes...)
			cache := newCache(t)
			mustFetch(t, cache, keyApp, repo.URL(), nil, next)

			got, err := cache.ChangedPaths(context.Background(), keyApp, base, next)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("ChangedPaths(base, next) = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestChangedPaths_ACommitTheCloneLacksIsNotFetched(t *testing.T) {
	srv := testgit.Start(t, testgit.Options{})
	repo := createRepo(t, srv, "app")
	first := commit(t, repo, map[string]string{"a.yaml": "a: 1\n"})
	cache := newCache(t)
	if _, err := cache.ChangedPaths(context.Background(), keyApp, first, first); !errors.Is(err, ErrNotFetched) {
		t.Fatalf("before any fetch: err = %v, want ErrNotFetched", err)
	}
	mustFetch(t, cache, keyApp, repo.URL(), nil, "main")
	later := commit(t, repo, map[string]string{"a.yaml": "a: 2\n"})
	_, err := cache.ChangedPaths(context.Background(), keyApp, first, later)
	if !errors.Is(err, ErrNotFetched) || !strings.Contains(err.Error(), later) {
		t.Fatalf("a commit pushed after the fetch: err = %v, want ErrNotFetched naming %s", err, later)
	}
	if _, err := cache.ChangedPaths(context.Background(), keyApp, first, "main"); err == nil || !strings.Contains(err.Error(), `"main" is not a full commit hash`) {
		t.Fatalf("a branch name: err = %v, want a refusal of anything but a commit hash", err)
	}
}
