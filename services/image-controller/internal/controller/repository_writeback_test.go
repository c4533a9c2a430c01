package controller_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	testregistry "github.com/kuvryn/kuvryn-sync/pkg/testkit/registry"
)

func TestRepository_CommitsEachNewlySelectedImage(t *testing.T) {
	ns := newNamespace(t)
	reg := testregistry.Start(t, testregistry.Options{})
	reg.Push(t, "acme/api", "1.0.0")
	image := reg.Host() + "/acme/api"
	deploy := "# api\nspec:\n  containers:\n    - name: api\n" +
		"      image: " + image + ":0.9.0 # {\"$imagepolicy\": \"" + ns + ":api\"}\n"
	values := "tag: '0.9.0'   # {\"$imagepolicy\": \"" + ns + ":api:tag\"}\nreplicas: 2 # kept\n"
	repo, initial := gitRepository(t, ns, "app", "apps", map[string]string{
		"apps/deploy.yaml": deploy, "apps/values.yaml": values, "README.md": "# app\n",
	})
	create(t, semver(ns, "api", image, "1.x"))

	var first string
	eventually(t, "a write-back commit", func() bool {
		r := repository(t, ns, "app")
		c := condition(r.Status.Conditions, syncv1.ConditionImagesUpdated)
		if c.Status == metav1.ConditionTrue && r.Status.ImageUpdate != nil && r.Status.ImageUpdate.LastPushCommit != "" {
			first = r.Status.ImageUpdate.LastPushCommit
			return true
		}
		return false
	})
	head, err := repo.Head("main")
	if err != nil || head != first || head == initial {
		t.Fatalf("main is at %s (%v); want the pushed %s on top of %s", head, err, first, initial)
	}
	selected := policy(t, ns, "api").Status.LatestImage
	if got, want := file(t, repo, "apps/deploy.yaml"), strings.Replace(deploy, image+":0.9.0", selected, 1); got != want {
		t.Errorf("apps/deploy.yaml:\n%s\nwant:\n%s", got, want)
	}
	if got, want := file(t, repo, "apps/values.yaml"), strings.Replace(values, "'0.9.0'", "'1.0.0'", 1); got != want {
		t.Errorf("apps/values.yaml:\n%s\nwant:\n%s", got, want)
	}
	msg := condition(repository(t, ns, "app").Status.Conditions, syncv1.ConditionImagesUpdated).Message
	if !strings.Contains(msg, ns+":api -> "+selected) {
		t.Errorf("ImagesUpdated message %q does not name the policy and image", msg)
	}

	reg.Push(t, "acme/api", "1.1.0")
	requestScan(t, policy(t, ns, "api"))
	eventually(t, "a second write-back commit for 1.1.0", func() bool {
		r := repository(t, ns, "app")
		return r.Status.ImageUpdate != nil && r.Status.ImageUpdate.LastPushCommit != first
	})
	if got := file(t, repo, "apps/values.yaml"); !strings.HasPrefix(got, "tag: '1.1.0'   #") {
		t.Errorf("apps/values.yaml after 1.1.0:\n%s", got)
	}
}

func TestRepository_RefusesMarkersOfOtherNamespaces(t *testing.T) {
	ns := newNamespace(t)
	reg := testregistry.Start(t, testregistry.Options{})
	reg.Push(t, "acme/api", "1.0.0")
	image := reg.Host() + "/acme/api"
	content := "a: 1\n" +
		"image: " + image + ":0.9.0 # {\"$imagepolicy\": \"kube-system:api\"}\n" +
		"tag: 0.9.0 # {\"$imagepolicy\": \"" + ns + ":api:tag:extra\"}\n" +
		"name: old # {\"$imagepolicy\": \"" + ns + ":api:name\"}\n"
	repo, _ := gitRepository(t, ns, "app", "", map[string]string{"deploy.yaml": content})
	create(t, semver(ns, "api", image, "1.x"))

	// The Repository may be reconciled before the policy selects; wait for
	// the write-back of the valid marker, which reports the refusal too.
	eventually(t, "ImagesUpdated False/Refused after a push", func() bool {
		r := repository(t, ns, "app")
		c := condition(r.Status.Conditions, syncv1.ConditionImagesUpdated)
		return c.Status == metav1.ConditionFalse && c.Reason == syncv1.ReasonRefused &&
			r.Status.ImageUpdate != nil && r.Status.ImageUpdate.LastPushCommit != ""
	})
	msg := condition(repository(t, ns, "app").Status.Conditions, syncv1.ConditionImagesUpdated).Message
	for _, want := range []string{"deploy.yaml:2 (kube-system:api)", "namespace " + ns} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not say %q", msg, want)
		}
	}
	want := strings.Replace(content, "name: old", "name: "+image, 1)
	if got := file(t, repo, "deploy.yaml"); got != want {
		t.Errorf("deploy.yaml:\n%s\nwant only the valid marker replaced:\n%s", got, want)
	}
}
