package controller_test

import (
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	testregistry "github.com/kuvryn/kuvryn-sync/pkg/testkit/registry"
)

// A Git server that is down heals by itself: the write-back is tried again
// within seconds, backing off, and the condition says when.
func TestRepository_WriteBackToAGitServerThatIsDownIsRetriedWithBackoff(t *testing.T) {
	ns := newNamespace(t)
	reg := testregistry.Start(t, testregistry.Options{})
	reg.Push(t, "acme/api", "1.0.0")
	create(t, semver(ns, "api", reg.Host()+"/acme/api", "1.x"))
	create(t, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "push", Labels: map[string]string{syncv1.GitCredentialsLabel: "true"}},
		Data:       map[string][]byte{"username": []byte("bot"), "password": []byte("push-s3cret")},
	})
	create(t, &syncv1.Repository{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"},
		Spec: syncv1.RepositorySpec{
			Git:         syncv1.GitSource{URL: "http://127.0.0.1:" + strconv.Itoa(freePort(t)) + "/app.git", Revision: "main"},
			ImageUpdate: &syncv1.ImageUpdateSpec{SecretRef: syncv1.LocalObjectReference{Name: "push"}, Path: "apps"},
		},
	})

	retries := retriesSaid(t, 20*time.Second, syncv1.ReasonPushFailed, func() metav1.Condition {
		return condition(repository(t, ns, "app").Status.Conditions, syncv1.ConditionImagesUpdated)
	})
	for _, want := range []string{"5s", "10s"} {
		if !retries[want] {
			t.Errorf("ImagesUpdated messages said retrying in %v, want %s among them (5s doubled)", keys(retries), want)
		}
	}
	if retries["5m0s"] {
		t.Errorf("ImagesUpdated messages said retrying in %v: backed off to the cap within 20s", keys(retries))
	}
}
