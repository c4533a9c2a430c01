package gitrepo

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	testgit "github.com/kuvryn/kuvryn-sync/pkg/testkit/git"
)

func TestFetchRef_FetchesPreviewRefsIntoTheClone(t *testing.T) {
	srv := testgit.Start(t, testgit.Options{})
	repo := createRepo(t, srv, "app")
	commit(t, repo, map[string]string{"a.yaml": "v: 1\n"})
	head := apply(t, repo, "feature", testgit.File("a.yaml", "v: 2\n"))
	if err := repo.SetRef("refs/pull/12/head", head); err != nil {
		t.Fatal(err)
	}
	if err := repo.SetRef("refs/merge-requests/3/head", head); err != nil {
		t.Fatal(err)
	}
	cache := newCache(t)
	ctx := context.Background()
	if _, err := cache.FetchRef(ctx, keyApp, repo.URL(), nil, "refs/pull/12/head"); !errors.Is(err, ErrNotFetched) {
		t.Fatalf("FetchRef before any Fetch = %v, want ErrNotFetched", err)
	}
	mustFetch(t, cache, keyApp, repo.URL(), nil, "main")

	for _, tc := range []struct {
		name, ref, wantErr string
	}{
		{"pull request", "refs/pull/12/head", ""},
		{"merge request", "refs/merge-requests/3/head", ""},
		{"branch", "refs/heads/feature", ""},
		{"missing ref", "refs/pull/99/head", "refs/pull/99/head"},
		{"not a ref", "feature", "is not a Git ref"},
		{"invalid ref", "refs/pull/../head", "is not a Git ref"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := cache.FetchRef(ctx, keyApp, repo.URL(), nil, tc.ref)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("FetchRef(%q) = %v, want an error containing %q", tc.ref, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != head {
				t.Fatalf("FetchRef(%q) = %q, %v; want %s", tc.ref, got, err, head)
			}
			// The commit is in the clone: a checkout needs no other fetch.
			mustCheckout(t, cache, keyApp, got)
		})
	}
}

func TestListBranches_ListsTheRemotesBranches(t *testing.T) {
	srv := testgit.Start(t, testgit.Options{})
	repo := createRepo(t, srv, "app")
	commit(t, repo, map[string]string{"a.yaml": "v: 1\n"})
	apply(t, repo, "preview/one", testgit.File("a.yaml", "v: 2\n"))
	head := apply(t, repo, "other", testgit.File("a.yaml", "v: 3\n"))
	if err := repo.SetRef("refs/pull/1/head", head); err != nil {
		t.Fatal(err)
	}
	got, err := newCache(t).ListBranches(context.Background(), keyApp, repo.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if want := []string{"main", "other", "preview/one"}; !slices.Equal(got, want) {
		t.Fatalf("ListBranches = %q, want %q", got, want)
	}
}
