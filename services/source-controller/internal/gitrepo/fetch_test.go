package gitrepo

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	testgit "github.com/kuvryn/kuvryn-sync/pkg/testkit/git"
)

func TestFetch_ResolvesRevisions(t *testing.T) {
	srv := testgit.Start(t, testgit.Options{})
	repo := createRepo(t, srv, "app")
	c1 := commit(t, repo, map[string]string{"a.yaml": "v: 1\n"})
	c2 := commit(t, repo, map[string]string{"a.yaml": "v: 2\n"})
	c3 := apply(t, repo, "release", testgit.File("a.yaml", "v: 3\n"))
	if err := repo.Tag("v1", c1); err != nil {
		t.Fatal(err)
	}
	tagObject, err := repo.AnnotatedTag("v2", c2, "release v2")
	if err != nil {
		t.Fatal(err)
	}
	// A tag with the same name as a branch: the branch wins unless the
	// revision says refs/tags/.
	if err := repo.Tag("release", c1); err != nil {
		t.Fatal(err)
	}
	cache := newCache(t)

	for _, tc := range []struct {
		name, revision, wantRef, wantCommit string
	}{
		{"empty revision follows main", "", "refs/heads/main", c2},
		{"branch name", "main", "refs/heads/main", c2},
		{"full branch ref", "refs/heads/main", "refs/heads/main", c2},
		{"lightweight tag", "v1", "refs/tags/v1", c1},
		{"annotated tag peels to its commit", "v2", "refs/tags/v2", c2},
		{"full annotated tag ref", "refs/tags/v2", "refs/tags/v2", c2},
		{"commit pin", c1, c1, c1},
		{"upper-case commit pin", strings.ToUpper(c1), c1, c1},
		{"branch wins over tag of the same name", "release", "refs/heads/release", c3},
		{"explicit tag ref beats branch", "refs/tags/release", "refs/tags/release", c1},
		{"explicit branch ref", "refs/heads/release", "refs/heads/release", c3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mustFetch(t, cache, keyApp, repo.URL(), nil, tc.revision)
			if got.Ref != tc.wantRef || got.Commit != tc.wantCommit {
				t.Fatalf("Fetch(%q) = %+v, want {Ref:%s Commit:%s}", tc.revision, got, tc.wantRef, tc.wantCommit)
			}
		})
	}
	if tagObject == c2 {
		t.Fatal("annotated tag was stored as a lightweight tag")
	}
}

func TestFetch_UnknownRevisionNamesRepositoryAndRevision(t *testing.T) {
	srv := testgit.Start(t, testgit.Options{})
	repo := createRepo(t, srv, "app")
	commit(t, repo, map[string]string{"a": "1"})
	cache := newCache(t)

	for _, tc := range []struct {
		name, revision, wantMsg string
	}{
		{"unknown name", "nope", "no such branch or tag"},
		{"unknown branch ref", "refs/heads/nope", "no such branch or tag"},
		{"unknown tag ref", "refs/tags/nope", "no such branch or tag"},
		{"unknown commit", strings.Repeat("de", 20), "commit not found"},
		{"ref outside heads and tags", "refs/pull/1/head", "only refs/heads/ and refs/tags/"},
		{"short commit is not a pin", "deadbee", "no such branch or tag"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cache.Fetch(context.Background(), keyApp, repo.URL(), nil, tc.revision)
			if err == nil {
				t.Fatalf("Fetch(%q) succeeded", tc.revision)
			}
			for _, want := range []string{"Repository team-a/app", `"` + tc.revision + `"`, tc.wantMsg} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}

func TestFetch_SeesNewPushesForcePushesAndDeletedBranches(t *testing.T) {
	srv := testgit.Start(t, testgit.Options{})
	repo := createRepo(t, srv, "app")
	c1 := commit(t, repo, map[string]string{"a": "1"})
	feature := apply(t, repo, "feature", testgit.File("b", "2"))
	if err := repo.Tag("feature", c1); err != nil {
		t.Fatal(err)
	}
	cache := newCache(t)
	if got := mustFetch(t, cache, keyApp, repo.URL(), nil, "main"); got.Commit != c1 {
		t.Fatalf("first fetch: %+v, want %s", got, c1)
	}

	c2 := commit(t, repo, map[string]string{"a": "2"})
	if got := mustFetch(t, cache, keyApp, repo.URL(), nil, "main"); got.Commit != c2 {
		t.Fatalf("after a push: %+v, want %s", got, c2)
	}

	if err := repo.Branch("main", c1); err != nil {
		t.Fatal(err)
	}
	if got := mustFetch(t, cache, keyApp, repo.URL(), nil, "main"); got.Commit != c1 {
		t.Fatalf("after a force-push: %+v, want %s", got, c1)
	}

	if got := mustFetch(t, cache, keyApp, repo.URL(), nil, "feature"); got.Commit != feature {
		t.Fatalf("feature branch: %+v, want %s", got, feature)
	}
	if err := repo.DeleteRef("refs/heads/feature"); err != nil {
		t.Fatal(err)
	}
	got := mustFetch(t, cache, keyApp, repo.URL(), nil, "feature")
	if got.Ref != "refs/tags/feature" || got.Commit != c1 {
		t.Fatalf("after deleting the branch, feature = %+v, want the tag at %s", got, c1)
	}
}

func TestFetch_ChangedURLStartsAFreshClone(t *testing.T) {
	srv := testgit.Start(t, testgit.Options{})
	first := createRepo(t, srv, "first")
	apply(t, first, "only-in-first", testgit.File("a", "1"))
	second := createRepo(t, srv, "second")
	want := commit(t, second, map[string]string{"b": "2"})
	cache := newCache(t)

	mustFetch(t, cache, keyApp, first.URL(), nil, "only-in-first")
	if got := mustFetch(t, cache, keyApp, second.URL(), nil, "main"); got.Commit != want {
		t.Fatalf("after the URL changed: %+v, want %s", got, want)
	}
	if _, err := cache.Fetch(context.Background(), keyApp, second.URL(), nil, "only-in-first"); err == nil {
		t.Fatal("a branch of the old URL is still resolvable")
	}
}

func TestFetch_FailedFirstCloneLeavesNothing(t *testing.T) {
	srv := testgit.Start(t, testgit.Options{})
	empty := createRepo(t, srv, "empty")
	cache := newCache(t)

	for _, url := range []string{empty.URL(), srv.URL("missing")} {
		if _, err := cache.Fetch(context.Background(), keyApp, url, nil, "main"); err == nil {
			t.Fatalf("Fetch of %s succeeded", url)
		}
		if _, err := cache.Checkout(context.Background(), keyApp, strings.Repeat("ab", 20)); err == nil || !strings.Contains(err.Error(), "fetch it first") {
			t.Fatalf("after a failed clone of %s, Checkout error = %v, want no clone", url, err)
		}
	}
}

func TestFetch_BasicAuth(t *testing.T) {
	const password = "pa55:w/rd"
	srv := testgit.Start(t, testgit.Options{Username: "git", Password: password})
	repo := createRepo(t, srv, "private")
	want := commit(t, repo, map[string]string{"a": "1"})

	for _, tc := range []struct {
		name    string
		secret  map[string]string
		wantErr bool
	}{
		{"username and password", map[string]string{UsernameKey: "git", PasswordKey: password}, false},
		{"token alone", map[string]string{TokenKey: password}, false},
		{"password alone is a token", map[string]string{PasswordKey: password}, false},
		{"wrong password", map[string]string{UsernameKey: "git", PasswordKey: "wrong-" + password}, true},
		{"wrong username", map[string]string{UsernameKey: "someone", PasswordKey: password}, true},
		{"no credentials", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var auth *Auth
			if tc.secret != nil {
				var err error
				if auth, err = AuthFromSecret(labelledSecret(tc.secret)); err != nil {
					t.Fatal(err)
				}
			}
			cache := newCache(t)
			got, err := cache.Fetch(context.Background(), keyApp, repo.URL(), auth, "main")
			if tc.wantErr {
				if err == nil {
					t.Fatal("Fetch succeeded")
				}
				if strings.Contains(err.Error(), password) {
					t.Fatalf("error leaks the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Commit != want {
				t.Fatalf("Fetch = %+v, want %s", got, want)
			}
		})
	}
}

func TestFetch_RefusesUnsafeURLsAndKeysBeforeAnyNetwork(t *testing.T) {
	cache := newCache(t)
	for _, tc := range []struct {
		name    string
		key     RepoKey
		url     string
		wantMsg string
	}{
		{"ssh without credentials", keyApp, "ssh://git@127.0.0.1:1/repo.git", "needs spec.git.secretRef"},
		{"scp-like ssh without credentials", keyApp, "git@127.0.0.1:org/repo.git", "needs spec.git.secretRef"},
		{"local file URL", keyApp, "file:///etc", `scheme "file" is not supported`},
		{"key escaping the cache", RepoKey{Namespace: "..", Name: "app"}, "http://127.0.0.1:1/x.git", "not a valid object name"},
		{"key with a slash", RepoKey{Namespace: "team-a", Name: "a/b"}, "http://127.0.0.1:1/x.git", "not a valid object name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cache.Fetch(context.Background(), tc.key, tc.url, nil, "main")
			if err == nil || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Fatalf("Fetch error = %v, want it to contain %q", err, tc.wantMsg)
			}
		})
	}
}

func TestFetch_ErrorsHideAPasswordInTheURL(t *testing.T) {
	srv := testgit.Start(t, testgit.Options{Username: "git", Password: "right-pw"})
	createRepo(t, srv, "private")
	cache := newCache(t)

	for _, url := range []string{
		strings.Replace(srv.URL("private"), "http://", "http://git:wrong-pw@", 1),
		"http://git:wrong-pw@127.0.0.1:1/closed.git",
	} {
		_, err := cache.Fetch(context.Background(), keyApp, url, nil, "main")
		if err == nil {
			t.Fatalf("Fetch of %s succeeded", url)
		}
		if strings.Contains(err.Error(), "wrong-pw") {
			t.Fatalf("error leaks the URL's password: %v", err)
		}
	}
}

func TestFetch_SerialisesPerRepositoryOnly(t *testing.T) {
	srv := testgit.Start(t, testgit.Options{})
	repo := createRepo(t, srv, "app")
	commit(t, repo, map[string]string{"a": "1"})
	cache := newCache(t)

	unlock, err := cache.lock(context.Background(), keyApp)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := cache.Fetch(ctx, RepoKey{Namespace: "team-b", Name: "app"}, repo.URL(), nil, "main"); err != nil {
		t.Fatalf("another Repository waited for a busy one: %v", err)
	}

	busy, cancelBusy := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancelBusy()
	if _, err := cache.Fetch(busy, keyApp, repo.URL(), nil, "main"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Fetch of a busy Repository = %v, want it to wait until its context ends", err)
	}
}
