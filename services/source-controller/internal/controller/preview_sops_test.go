package controller_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	testgit "github.com/kuvryn/kuvryn-sync/pkg/testkit/git"
)

// TestPreview_SOPSWithheldUnlessDecrypt: a pull request may come from
// anyone, so its preview decrypts nothing unless spec.previews.decrypt says
// so, and says what it left out.
func TestPreview_SOPSWithheldUnlessDecrypt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		decrypt      bool
		wantObjects  int
		wantWithheld []string
	}{
		{"withheld without decrypt", false, 1, []string{"apps/payments/db.yaml: SOPS-encrypted, not decrypted (spec.previews.decrypt is off)"}},
		{"decrypted with decrypt", true, 2, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := newNamespace(t)
			plaintext, id, _, gitRepo := encryptedSecretRepo(t, ns)
			newKeySecret(t, ns, "payments-age", id, true)
			newDecryptingApplication(t, ns, "payments", "payments-age")
			eventually(t, "a desired Revision", func() bool {
				return get(t, &syncv1.Application{}, ns, "payments").Status.DesiredRevision != ""
			})
			enablePreviews(t, ns, "platform", syncv1.PreviewsSpec{PullRequests: syncv1.PreviewProviderGitHub, MaxActive: 10, Decrypt: tc.decrypt})
			openPullRequest(t, gitRepo, ns, 1, "feature", testgit.File("apps/payments/settings.yaml", strings.Replace(configMap, "%s", "green", 1)))
			objs := onlyPreviewRevision(t, ns, "pr-1", tc.wantWithheld)
			if len(objs) != tc.wantObjects {
				t.Fatalf("preview desired state holds %d objects, want %d", len(objs), tc.wantObjects)
			}
			for _, o := range objs {
				if o.GetKind() != "Secret" {
					continue
				}
				if password, _, _ := unstructured.NestedString(o.Object, "stringData", "password"); password != plaintext {
					t.Fatal("the decrypting preview does not hold the decrypted Secret")
				}
			}
		})
	}
}
