package gitrepo

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	testgit "github.com/kuvryn/kuvryn-sync/pkg/testkit/git"
)

var keyApp = RepoKey{Namespace: "team-a", Name: "app"}

func newCache(t *testing.T) *Cache {
	t.Helper()
	return &Cache{Dir: t.TempDir()}
}

func createRepo(t *testing.T, srv *testgit.Server, name string) *testgit.Repo {
	t.Helper()
	r, err := srv.CreateRepo(name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func commit(t *testing.T, r *testgit.Repo, files map[string]string) string {
	t.Helper()
	hash, err := r.Commit(files, "test commit")
	if err != nil {
		t.Fatal(err)
	}
	return hash
}

func apply(t *testing.T, r *testgit.Repo, branch string, changes ...testgit.Change) string {
	t.Helper()
	hash, err := r.Apply(branch, "test commit", changes...)
	if err != nil {
		t.Fatal(err)
	}
	return hash
}

func mustFetch(t *testing.T, c *Cache, key RepoKey, url string, auth *Auth, revision string) Result {
	t.Helper()
	res, err := c.Fetch(context.Background(), key, url, auth, revision)
	if err != nil {
		t.Fatalf("Fetch(%s, %q): %v", key, revision, err)
	}
	return res
}

func mustCheckout(t *testing.T, c *Cache, key RepoKey, commit string) string {
	t.Helper()
	dir, err := c.Checkout(context.Background(), key, commit)
	if err != nil {
		t.Fatalf("Checkout(%s, %s): %v", key, commit, err)
	}
	return dir
}

func labelledSecret(data map[string]string) *corev1.Secret {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "team-a",
			Name:      "git-creds",
			Labels:    map[string]string{syncv1.GitCredentialsLabel: "true"},
		},
		Data: map[string][]byte{},
	}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

// rawEntry is a tree entry written verbatim, in the given order, so tests can
// build trees that Git itself would refuse to create.
type rawEntry struct {
	mode filemode.FileMode
	name string
	hash plumbing.Hash
}

func storeRaw(t *testing.T, repo *git.Repository, typ plumbing.ObjectType, content []byte) plumbing.Hash {
	t.Helper()
	obj := repo.Storer.NewEncodedObject()
	obj.SetType(typ)
	w, err := obj.Writer()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(content); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	hash, err := repo.Storer.SetEncodedObject(obj)
	if err != nil {
		t.Fatal(err)
	}
	return hash
}

func storeBlob(t *testing.T, repo *git.Repository, content string) plumbing.Hash {
	return storeRaw(t, repo, plumbing.BlobObject, []byte(content))
}

func storeTree(t *testing.T, repo *git.Repository, entries ...rawEntry) plumbing.Hash {
	t.Helper()
	var b bytes.Buffer
	for _, e := range entries {
		fmt.Fprintf(&b, "%o %s\x00", uint32(e.mode), e.name)
		b.Write(e.hash[:])
	}
	return storeRaw(t, repo, plumbing.TreeObject, b.Bytes())
}

func storeCommit(t *testing.T, repo *git.Repository, tree plumbing.Hash) string {
	t.Helper()
	sig := object.Signature{Name: "Hostile", Email: "hostile@example.com", When: time.Unix(1700000000, 0)}
	c := &object.Commit{Author: sig, Committer: sig, Message: "hostile", TreeHash: tree}
	obj := repo.Storer.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		t.Fatal(err)
	}
	hash, err := repo.Storer.SetEncodedObject(obj)
	if err != nil {
		t.Fatal(err)
	}
	return hash.String()
}
