package writeback

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	testgit "github.com/kuvryn/kuvryn-sync/pkg/testkit/git"
	"github.com/kuvryn/kuvryn-sync/services/image-controller/internal/setters"
)

func TestUpdate_PushesWithLabelledCredentialsOnly(t *testing.T) {
	srv := testgit.Start(t, testgit.Options{Username: "bot", Password: "push-s3cret"})
	repo := newRepo(t, srv, "payments/private", map[string]string{
		"deploy.yaml": "image: x:1 # {\"$imagepolicy\": \"payments:api\"}\n",
	})
	secret := func(labelled bool, password string) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "payments", Name: "push"},
			Data: map[string][]byte{"username": []byte("bot"), "password": []byte(password)}}
		if labelled {
			s.Labels = map[string]string{syncv1.GitCredentialsLabel: "true"}
		}
		return s
	}
	if _, err := AuthFromSecret(secret(false, "push-s3cret"), repo.URL()); err == nil || !strings.Contains(err.Error(), "is not labelled") {
		t.Fatalf("unlabelled Secret: %v, want a refusal", err)
	}
	req := Request{Repository: "payments/private", URL: repo.URL(), Branch: "main",
		Namespace: "payments", Images: map[string]setters.Image{"api": apiImage}}

	wrong, err := AuthFromSecret(secret(true, "wrong"), repo.URL())
	if err != nil {
		t.Fatal(err)
	}
	req.Auth = wrong
	out, err := (&Writer{}).Update(t.Context(), req)
	if err == nil || out.Attempts != 1 || strings.Contains(err.Error(), "push-s3cret") {
		t.Fatalf("wrong password: outcome %+v, error %v; want one failed attempt", out, err)
	}

	right, err := AuthFromSecret(secret(true, "push-s3cret"), repo.URL())
	if err != nil {
		t.Fatal(err)
	}
	req.Auth = right
	if out, err = (&Writer{}).Update(t.Context(), req); err != nil || out.Commit == "" {
		t.Fatalf("outcome %+v, error %v; want a pushed commit", out, err)
	}
}
