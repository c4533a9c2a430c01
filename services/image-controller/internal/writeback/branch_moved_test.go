package writeback

import (
	"strings"
	"testing"

	testgit "github.com/kuvryn/kuvryn-sync/pkg/testkit/git"
	"github.com/kuvryn/kuvryn-sync/services/image-controller/internal/setters"
)

func TestUpdate_RetriesWhenTheBranchMoved(t *testing.T) {
	srv := testgit.Start(t, testgit.Options{})
	repo := newRepo(t, srv, "payments/app", map[string]string{
		"deploy.yaml": "image: ghcr.io/acme/api:1.0.0 # {\"$imagepolicy\": \"payments:api\"}\n",
	})
	var concurrent string
	w := &Writer{beforePush: func(attempt int) {
		if attempt != 1 {
			return
		}
		var err error
		if concurrent, err = repo.Apply("main", "a colleague's commit", testgit.File("notes.txt", "mine\n")); err != nil {
			t.Error(err)
		}
	}}
	out, err := w.Update(t.Context(), Request{Repository: "payments/app", URL: repo.URL(), Branch: "main",
		Namespace: "payments", Images: map[string]setters.Image{"api": apiImage}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Attempts != 2 || out.Commit == "" {
		t.Fatalf("outcome %+v, want a commit on the second attempt", out)
	}
	files, commit := checkout(t, repo.URL(), nil)
	if commit.Hash.String() != out.Commit {
		t.Fatalf("branch at %s, want %s", commit.Hash, out.Commit)
	}
	if len(commit.ParentHashes) != 1 || commit.ParentHashes[0].String() != concurrent {
		t.Errorf("write-back commit has parents %v, want the concurrent commit %s", commit.ParentHashes, concurrent)
	}
	if files["notes.txt"] != "mine\n" || !strings.Contains(files["deploy.yaml"], apiImage.String()) {
		t.Errorf("a commit was lost: files %v", files)
	}
}

func TestUpdate_GivesUpAfterBoundedAttempts(t *testing.T) {
	srv := testgit.Start(t, testgit.Options{})
	repo := newRepo(t, srv, "payments/busy", map[string]string{
		"deploy.yaml": "image: x:1 # {\"$imagepolicy\": \"payments:api\"}\n",
	})
	w := &Writer{MaxAttempts: 3, beforePush: func(attempt int) {
		if _, err := repo.Apply("main", "always first", testgit.File("n.txt", strings.Repeat("x", attempt))); err != nil {
			t.Error(err)
		}
	}}
	out, err := w.Update(t.Context(), Request{Repository: "payments/busy", URL: repo.URL(), Branch: "main",
		Namespace: "payments", Images: map[string]setters.Image{"api": apiImage}})
	if err == nil || out.Attempts != 3 || !strings.Contains(err.Error(), ErrBranchMoved.Error()) {
		t.Fatalf("outcome %+v, error %v; want %v after 3 attempts", out, err, ErrBranchMoved)
	}
}
