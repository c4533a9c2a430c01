package scan

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

func TestAuthFromSecret_ReadsOnlyLabelledDockerConfig(t *testing.T) {
	const cfg = `{"auths":{"https://ghcr.io/v1/":{"auth":"cm9ib3Q6czNjcmV0"},"127.0.0.1:5000":{"username":"u","password":"p"}}}`
	secret := func(labelled bool, data string) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "payments", Name: "pull"},
			Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(data)}}
		if labelled {
			s.Labels = map[string]string{syncv1.RegistryCredentialsLabel: "true"}
		}
		return s
	}
	for _, tc := range []struct {
		name, image, data string
		labelled          bool
		user, refusal     string
	}{
		{name: "auth field decoded", image: "ghcr.io/acme/api", data: cfg, labelled: true, user: "robot"},
		{name: "host with port", image: "127.0.0.1:5000/web", data: cfg, labelled: true, user: "u"},
		{name: "unlabelled refused", image: "ghcr.io/acme/api", data: cfg, refusal: "is not labelled sync.kuvryn.io/registry-credentials"},
		{name: "no entry for the registry", image: "quay.io/acme/api", data: cfg, labelled: true, refusal: "has no entry for registry quay.io"},
		{name: "not JSON, value not echoed", image: "ghcr.io/acme/api", data: "hunter2", labelled: true, refusal: "is not a valid docker config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			auth, err := AuthFromSecret(secret(tc.labelled, tc.data), tc.image)
			if tc.refusal != "" {
				if !errors.Is(err, ErrCredentialsRefused) || !strings.Contains(err.Error(), tc.refusal) || !strings.Contains(err.Error(), "payments/pull") {
					t.Fatalf("error %v, want a refusal of payments/pull saying %q", err, tc.refusal)
				}
				if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "s3cret") {
					t.Fatalf("error %q leaks a credential", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ac, err := auth.Authorization()
			if err != nil || ac.Username != tc.user {
				t.Fatalf("username %q (%v), want %q", ac.Username, err, tc.user)
			}
		})
	}
}

// FuzzDockerConfig: a Secret's .dockerconfigjson is untrusted input; no
// input panics, and no refusal quotes it.
func FuzzDockerConfig(f *testing.F) {
	f.Add([]byte(`{"auths":{"ghcr.io":{"auth":"cm9ib3Q6czNjcmV0"}}}`), "ghcr.io")
	f.Add([]byte(`{"auths":{"ghcr.io":{"auth":"!!!"}}}`), "ghcr.io")
	f.Add([]byte(`{"auths":{"https://index.docker.io/v1/":{"username":"a","password":"b"}}}`), "index.docker.io")
	f.Add([]byte(`{"auths":null}`), "x")
	f.Fuzz(func(t *testing.T, raw []byte, registry string) {
		_, err := authFor(raw, registry, "ns/secret")
		if err != nil && len(raw) > 8 && strings.Contains(err.Error(), string(raw)) {
			t.Fatalf("refusal %q quotes the Secret", err)
		}
	})
}
