package testgit

import (
	"crypto/rand"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitClient runs the git CLI as an independent client of the server.
func gitClient(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + t.TempDir(),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + os.DevNull,
		"GIT_TERMINAL_PROMPT=0",
	}
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func mustGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := gitClient(t, dir, args...)
	if err != nil {
		t.Fatalf("git %v: %v: %s", args, err, out)
	}
	return out
}

func mustRepo(t *testing.T, s *Server, name string) *Repo {
	t.Helper()
	r, err := s.CreateRepo(name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestServer_CommitsAreClonableWithModesAndSymlinks(t *testing.T) {
	s := Start(t, Options{})
	r := mustRepo(t, s, "team/app")
	if _, err := r.Commit(map[string]string{"a.yaml": "a: 1\n", "dir/b.yaml": "b: 2\n"}, "first"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Apply(DefaultBranch, "second", Executable("run.sh", "#!/bin/sh\n"), Symlink("escape", "/etc/passwd"), Delete("dir")); err != nil {
		t.Fatal(err)
	}
	head, err := r.Head(DefaultBranch)
	if err != nil {
		t.Fatal(err)
	}

	dir := filepath.Join(t.TempDir(), "clone")
	mustGit(t, "", "clone", "--quiet", r.URL(), dir)
	if got := mustGit(t, dir, "rev-parse", "HEAD"); got != head {
		t.Fatalf("clone HEAD = %s, server main = %s", got, head)
	}
	if got := mustGit(t, dir, "ls-tree", "-r", "--format=%(objectmode) %(path)", "HEAD"); got != "100644 a.yaml\n120000 escape\n100755 run.sh" {
		t.Fatalf("tree:\n%s", got)
	}
	if target, err := os.Readlink(filepath.Join(dir, "escape")); err != nil || target != "/etc/passwd" {
		t.Fatalf("symlink escape = %q, %v", target, err)
	}
	if got := mustGit(t, dir, "rev-list", "--count", "HEAD"); got != "2" {
		t.Fatalf("history has %s commits, want 2", got)
	}
}

func TestServer_BranchesAndTags(t *testing.T) {
	s := Start(t, Options{})
	r := mustRepo(t, s, "app")
	first, err := r.Commit(map[string]string{"f": "1"}, "first")
	if err != nil {
		t.Fatal(err)
	}
	feature, err := r.Apply("feature", "on feature", File("g", "2"))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Tag("v1", first); err != nil {
		t.Fatal(err)
	}
	tagObject, err := r.AnnotatedTag("v2", feature, "release v2")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Branch("stable", first); err != nil {
		t.Fatal(err)
	}
	if err := r.SetRef("refs/pull/7/head", feature); err != nil {
		t.Fatal(err)
	}

	refs := mustGit(t, "", "ls-remote", r.URL())
	for _, want := range []string{
		first + "\trefs/heads/main",
		feature + "\trefs/heads/feature",
		first + "\trefs/heads/stable",
		first + "\trefs/tags/v1",
		tagObject + "\trefs/tags/v2",
		feature + "\trefs/tags/v2^{}",
		feature + "\trefs/pull/7/head",
	} {
		if !strings.Contains(refs, want) {
			t.Errorf("ls-remote lacks %q:\n%s", want, refs)
		}
	}
	if tagObject == feature {
		t.Error("annotated tag object hash equals the commit hash")
	}

	if err := r.DeleteRef("refs/heads/feature"); err != nil {
		t.Fatal(err)
	}
	if refs := mustGit(t, "", "ls-remote", r.URL()); strings.Contains(refs, "refs/heads/feature") {
		t.Errorf("deleted branch still listed:\n%s", refs)
	}
}

func TestServer_BasicAuthGuardsReadsAndWrites(t *testing.T) {
	s := Start(t, Options{Username: "ci", Password: "s3cr:et/pw"})
	r := mustRepo(t, s, "private")
	commit, err := r.Commit(map[string]string{"f": "1"}, "first")
	if err != nil {
		t.Fatal(err)
	}

	if out, err := gitClient(t, "", "ls-remote", r.URL()); err == nil {
		t.Fatalf("ls-remote without credentials succeeded: %s", out)
	}
	wrong, _ := url.Parse(r.URL())
	wrong.User = url.UserPassword("ci", "wrong")
	if out, err := gitClient(t, "", "ls-remote", wrong.String()); err == nil {
		t.Fatalf("ls-remote with a wrong password succeeded: %s", out)
	}
	right, _ := url.Parse(r.URL())
	right.User = url.UserPassword("ci", "s3cr:et/pw")
	if refs := mustGit(t, "", "ls-remote", right.String()); !strings.Contains(refs, commit+"\trefs/heads/main") {
		t.Fatalf("ls-remote with credentials:\n%s", refs)
	}
}

func TestServer_LargeChunkedPushIsAccepted(t *testing.T) {
	s := Start(t, Options{})
	r := mustRepo(t, s, "big")
	// Random bytes do not compress, so the pack exceeds git's 1 MiB
	// http.postBuffer and the push is sent chunked.
	blob := make([]byte, 3<<20)
	if _, err := rand.Read(blob); err != nil {
		t.Fatal(err)
	}
	commit, err := r.Commit(map[string]string{"blob.bin": string(blob)}, "big")
	if err != nil {
		t.Fatal(err)
	}
	if head, err := r.Head(DefaultBranch); err != nil || head != commit {
		t.Fatalf("Head = %s, %v; want %s", head, err, commit)
	}
}

func TestServer_RefusesInvalidInput(t *testing.T) {
	s := Start(t, Options{})
	r := mustRepo(t, s, "app")
	if _, err := s.CreateRepo("app"); err == nil {
		t.Error("creating a repository twice succeeded")
	}
	for _, name := range []string{"", "../x", "a/../b", "x.git", "/abs", "sp ace"} {
		if _, err := s.CreateRepo(name); err == nil {
			t.Errorf("CreateRepo(%q) succeeded", name)
		}
	}
	for _, p := range []string{"../x", "/abs", "a/../b", "a//b", ""} {
		if _, err := r.Commit(map[string]string{p: "x"}, "bad"); err == nil {
			t.Errorf("Commit of path %q succeeded", p)
		}
	}
	if _, err := r.Apply("bad..branch", "bad", File("f", "x")); err == nil {
		t.Error("Apply to an invalid branch name succeeded")
	}
}

func TestServer_CloseRemovesTemporaryRoot(t *testing.T) {
	s, err := NewServer(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateRepo("app"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.root); !os.IsNotExist(err) {
		t.Fatalf("root %s still exists after Close: %v", s.root, err)
	}
}
