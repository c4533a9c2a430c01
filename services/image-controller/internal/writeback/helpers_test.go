package writeback

import (
	"testing"

	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/memory"

	testgit "github.com/kuvryn/kuvryn-sync/pkg/testkit/git"
	"github.com/kuvryn/kuvryn-sync/services/image-controller/internal/setters"
)

const digestA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

var apiImage = setters.Image{Name: "ghcr.io/acme/api", Tag: "1.2.0", Digest: digestA}

// checkout clones branch main of url and returns its files and head commit.
func checkout(t *testing.T, url string, auth transport.AuthMethod) (map[string]string, *object.Commit) {
	t.Helper()
	fs := memfs.New()
	repo, err := git.Clone(memory.NewStorage(), fs, &git.CloneOptions{URL: url, Auth: auth})
	if err != nil {
		t.Fatal(err)
	}
	head, err := repo.Head()
	if err != nil {
		t.Fatal(err)
	}
	commit, err := repo.CommitObject(head.Hash())
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	iter, err := commit.Files()
	if err != nil {
		t.Fatal(err)
	}
	if err := iter.ForEach(func(f *object.File) error {
		s, err := f.Contents()
		files[f.Name] = s
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return files, commit
}

func newRepo(t *testing.T, srv *testgit.Server, name string, files map[string]string) *testgit.Repo {
	t.Helper()
	r, err := srv.CreateRepo(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Commit(files, "initial"); err != nil {
		t.Fatal(err)
	}
	return r
}
