package writeback

import (
	"testing"

	testgit "github.com/kuvryn/kuvryn-sync/pkg/testkit/git"
	"github.com/kuvryn/kuvryn-sync/services/image-controller/internal/setters"
)

func TestUpdate_RefusesOtherNamespacesAndLeavesFourPartMarkers(t *testing.T) {
	srv := testgit.Start(t, testgit.Options{})
	content := "a: 1\n" +
		"image: ghcr.io/acme/api:1.0.0 # {\"$imagepolicy\": \"billing:api\"}\n" +
		"tag: 1.0.0 # {\"$imagepolicy\": \"payments:api:tag:extra\"}\n"
	repo := newRepo(t, srv, "payments/refused", map[string]string{"apps/deploy.yaml": content})
	out, err := (&Writer{}).Update(t.Context(), Request{Repository: "payments/refused", URL: repo.URL(), Branch: "main",
		Namespace: "payments", Images: map[string]setters.Image{"api": apiImage}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Commit != "" {
		t.Errorf("committed %s although no marker may be written", out.Commit)
	}
	want := Location{File: "apps/deploy.yaml", Line: 2, Ref: "billing:api"}
	if len(out.Refused) != 1 || out.Refused[0] != want {
		t.Errorf("refused %v, want %v", out.Refused, want)
	}
	files, _ := checkout(t, repo.URL(), nil)
	if files["apps/deploy.yaml"] != content {
		t.Errorf("file changed:\n%s", files["apps/deploy.yaml"])
	}
}
