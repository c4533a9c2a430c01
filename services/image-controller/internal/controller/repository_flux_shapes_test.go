package controller_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	testregistry "github.com/kuvryn/kuvryn-sync/pkg/testkit/registry"
	"github.com/kuvryn/kuvryn-sync/services/image-controller/internal/setters"
)

// A Flux repository moves over unchanged: a kustomization named
// Kustomization with :name, :tag and :digest markers and a marked target
// after a patch's block text gets the scanned image's parts, byte for byte.
func TestRepository_WritesFluxKustomizationShapes(t *testing.T) {
	ns := newNamespace(t)
	reg := testregistry.Start(t, testregistry.Options{})
	reg.Push(t, "acme/api", "1.0.0")
	image := reg.Host() + "/acme/api"
	const oldDigest = "sha256:0000000000000000000000000000000000000000000000000000000000000000"
	kustomization := func(name, tag, digest, full string) string {
		return "apiVersion: kustomize.config.k8s.io/v1beta1\r\n" +
			"kind: Kustomization\r\n" +
			"images:\r\n" +
			"  - name: api\r\n" +
			"    newName: " + name + " # {\"$imagepolicy\": \"" + ns + ":api:name\"}\r\n" +
			"    newTag: \"" + tag + "\" # {\"$imagepolicy\": \"" + ns + ":api:tag\"}\r\n" +
			"  - name: api-pinned\r\n" +
			"    digest: " + digest + " # {\"$imagepolicy\": \"" + ns + ":api:digest\"}\r\n" +
			"patches:\r\n" +
			"  - patch: |\r\n" +
			"      - op: replace\r\n" +
			"        path: /spec/template/spec/containers/0/image\r\n" +
			"        value: old:0.9.0 # {\"$imagepolicy\": \"" + ns + ":api\"}\r\n" +
			"    target:\r\n" +
			"      kind: Deployment\r\n" +
			"      image: " + full + " # {\"$imagepolicy\": \"" + ns + ":api\"}\r\n"
	}
	before := kustomization("old", "0.9.0", oldDigest, "old:0.9.0")
	repo, _ := gitRepository(t, ns, "app", "apps", map[string]string{"apps/Kustomization": before})
	create(t, semver(ns, "api", image, "1.x"))

	eventually(t, "a write-back commit", func() bool {
		r := repository(t, ns, "app")
		c := condition(r.Status.Conditions, syncv1.ConditionImagesUpdated)
		return c.Status == metav1.ConditionTrue && r.Status.ImageUpdate != nil && r.Status.ImageUpdate.LastPushCommit != ""
	})
	latest := policy(t, ns, "api").Status.LatestImage
	img, ok := setters.ParseImage(latest)
	if !ok || !strings.HasPrefix(img.Digest, "sha256:") {
		t.Fatalf("status.latestImage %q has no digest", latest)
	}
	if got, want := file(t, repo, "apps/Kustomization"), kustomization(image, "1.0.0", img.Digest, latest); got != want {
		t.Errorf("apps/Kustomization:\n%q\nwant:\n%q", got, want)
	}
}
