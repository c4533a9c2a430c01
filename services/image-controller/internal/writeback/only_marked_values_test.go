package writeback

import (
	"strings"
	"testing"

	testgit "github.com/kuvryn/kuvryn-sync/pkg/testkit/git"
	"github.com/kuvryn/kuvryn-sync/services/image-controller/internal/setters"
)

func TestUpdate_TouchesOnlyMarkedValues(t *testing.T) {
	srv := testgit.Start(t, testgit.Options{})
	deploy := "# The api, pinned by the image-controller.\n" +
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api}\n" +
		"spec:\n  template:\n    spec:\n      containers:\n" +
		"        - name: api\n" +
		"          image: ghcr.io/acme/api:1.0.0 # {\"$imagepolicy\": \"payments:api\"}\n" +
		"          args: [\"--port\",   \"8080\"]   # odd spacing stays\n"
	values := "image:\n  repository: ghcr.io/acme/api # {\"$imagepolicy\": \"payments:api:name\"}\n" +
		"  tag: \"1.0.0\" # {\"$imagepolicy\": \"payments:api:tag\"}\n"
	outside := "image: ghcr.io/acme/api:1.0.0 # {\"$imagepolicy\": \"payments:api\"}\n"
	repo := newRepo(t, srv, "payments/app", map[string]string{
		"apps/deploy.yaml": deploy, "apps/chart/values.yml": values,
		"apps/README.md": outside, "other/deploy.yaml": outside,
	})
	w := &Writer{}
	req := Request{Repository: "payments/app", URL: repo.URL(), Branch: "main", Path: "apps",
		Namespace: "payments", Images: map[string]setters.Image{"api": apiImage}}

	out, err := w.Update(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if out.Commit == "" || out.Files != 2 || out.Attempts != 1 {
		t.Fatalf("outcome %+v, want one commit changing 2 files in 1 attempt", out)
	}
	files, commit := checkout(t, repo.URL(), nil)
	if commit.Hash.String() != out.Commit {
		t.Fatalf("branch is at %s, want the pushed %s", commit.Hash, out.Commit)
	}
	wantDeploy := strings.Replace(deploy, "ghcr.io/acme/api:1.0.0", apiImage.String(), 1)
	wantValues := strings.Replace(values, `"1.0.0"`, `"1.2.0"`, 1)
	for path, want := range map[string]string{
		"apps/deploy.yaml": wantDeploy, "apps/chart/values.yml": wantValues,
		"apps/README.md": outside, "other/deploy.yaml": outside,
	} {
		if files[path] != want {
			t.Errorf("%s after write-back:\n%s\nwant:\n%s", path, files[path], want)
		}
	}
	for _, want := range []string{"ImagePolicy payments:api", apiImage.String()} {
		if !strings.Contains(commit.Message, want) {
			t.Errorf("commit message %q does not name %q", commit.Message, want)
		}
	}

	again, err := w.Update(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	head, err := repo.Head("main")
	if err != nil {
		t.Fatal(err)
	}
	if again.Commit != "" || head != out.Commit {
		t.Errorf("a second update with the same images committed %q (branch at %s)", again.Commit, head)
	}
}
