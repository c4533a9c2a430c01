package writeback

import (
	"strings"
	"testing"

	testgit "github.com/kuvryn/kuvryn-sync/pkg/testkit/git"
	"github.com/kuvryn/kuvryn-sync/services/image-controller/internal/setters"
)

// Flux and kustomize read a kustomization from kustomization.yaml,
// kustomization.yml or Kustomization; markers in each are written, and other
// files without a YAML extension stay untouched.
func TestUpdate_ReadsEveryKustomizationFileName(t *testing.T) {
	const oldDigest = "sha256:0000000000000000000000000000000000000000000000000000000000000000"
	kustomization := func(name, tag, digest, eol string) string {
		return strings.ReplaceAll("apiVersion: kustomize.config.k8s.io/v1beta1\n"+
			"kind: Kustomization\n"+
			"resources: [deploy.yaml]\n"+
			"images:\n"+
			"  - name: api # pinned by the image-controller\n"+
			"    newName: "+name+" # {\"$imagepolicy\": \"payments:api:name\"}\n"+
			"    newTag: '"+tag+"' # {\"$imagepolicy\": \"payments:api:tag\"}\n"+
			"  - name: api-pinned\n"+
			"    digest: "+digest+" # {\"$imagepolicy\": \"payments:api:digest\"}\n", "\n", eol)
	}
	before := kustomization("ghcr.io/old/api", "1.0.0", oldDigest, "\n")
	after := kustomization(apiImage.Name, apiImage.Tag, apiImage.Digest, "\n")
	marked := "image: ghcr.io/acme/api:1.0.0 # {\"$imagepolicy\": \"payments:api\"}\n"
	cases := []struct {
		file, content, want string
	}{
		{"apps/Kustomization", before, after},
		{"apps/base/kustomization.yaml", before, after},
		{"apps/overlay/kustomization.yml", kustomization("ghcr.io/old/api", "1.0.0", oldDigest, "\r\n"),
			kustomization(apiImage.Name, apiImage.Tag, apiImage.Digest, "\r\n")},
		{"apps/Kustomization.yaml", before, after},
		// Neither kustomize nor Flux read these as kustomizations.
		{"apps/kustomization", before, before},
		{"apps/MyKustomization", before, before},
		{"apps/Kustomization.txt", before, before},
		{"apps/Dockerfile", marked, marked},
		{"apps/image", marked, marked},
	}
	files := map[string]string{}
	for _, tc := range cases {
		files[tc.file] = tc.content
	}
	srv := testgit.Start(t, testgit.Options{})
	repo := newRepo(t, srv, "payments/app", files)
	out, err := (&Writer{}).Update(t.Context(), Request{Repository: "payments/app", URL: repo.URL(),
		Branch: "main", Path: "apps", Namespace: "payments", Images: map[string]setters.Image{"api": apiImage}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Commit == "" || out.Files != 4 {
		t.Errorf("outcome %+v, want one commit changing the 4 kustomizations", out)
	}
	got, _ := checkout(t, repo.URL(), nil)
	for _, tc := range cases {
		if got[tc.file] != tc.want {
			t.Errorf("%s after write-back:\n%q\nwant:\n%q", tc.file, got[tc.file], tc.want)
		}
	}
}
