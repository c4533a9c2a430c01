package scan

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	corev1 "k8s.io/api/core/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// ErrCredentialsRefused marks a Secret that cannot be used as registry
// credentials; the controller reports it with reason CredentialsRefused.
var ErrCredentialsRefused = errors.New("credentials refused")

// dockerConfig is the .dockerconfigjson format; authn.AuthConfig decodes
// the "auth" field into username and password.
type dockerConfig struct {
	Auths map[string]authn.AuthConfig `json:"auths"`
}

// AuthFromSecret returns the credentials a dockerconfigjson Secret labelled
// sync.kuvryn.io/registry-credentials: "true" holds for image's registry.
// Errors wrap ErrCredentialsRefused and name the Secret and key, never a
// value.
func AuthFromSecret(secret *corev1.Secret, image string) (authn.Authenticator, error) {
	id := secret.Namespace + "/" + secret.Name
	if secret.Labels[syncv1.RegistryCredentialsLabel] != "true" {
		return nil, fmt.Errorf("%w: Secret %s is not labelled %s: \"true\"", ErrCredentialsRefused, id, syncv1.RegistryCredentialsLabel)
	}
	raw, ok := secret.Data[corev1.DockerConfigJsonKey]
	if !ok {
		return nil, fmt.Errorf("%w: Secret %s has no %s key", ErrCredentialsRefused, id, corev1.DockerConfigJsonKey)
	}
	repo, err := name.NewRepository(image)
	if err != nil {
		return nil, fmt.Errorf("spec.image %q is not an image repository: %w", image, err)
	}
	return authFor(raw, repo.RegistryStr(), id)
}

func authFor(raw []byte, registry, id string) (authn.Authenticator, error) {
	var cfg dockerConfig
	if err := json.Unmarshal(raw, &cfg); err != nil {
		// The decoder's message can quote the input, so it is not echoed.
		return nil, fmt.Errorf("%w: Secret %s: %s is not a valid docker config", ErrCredentialsRefused, id, corev1.DockerConfigJsonKey)
	}
	for host, ac := range cfg.Auths {
		if registryHost(host) != registry {
			continue
		}
		if ac.Username == "" && ac.Password == "" && ac.IdentityToken == "" && ac.RegistryToken == "" {
			return nil, fmt.Errorf("%w: Secret %s: the entry for %s has no username, password or token", ErrCredentialsRefused, id, registry)
		}
		return authn.FromConfig(authn.AuthConfig{Username: ac.Username, Password: ac.Password,
			IdentityToken: ac.IdentityToken, RegistryToken: ac.RegistryToken}), nil
	}
	return nil, fmt.Errorf("%w: Secret %s has no entry for registry %s in %s", ErrCredentialsRefused, id, registry, corev1.DockerConfigJsonKey)
}

// registryHost normalises a docker config key (ghcr.io,
// https://index.docker.io/v1/, localhost:5000/) to the registry name
// go-containerregistry uses.
func registryHost(key string) string {
	key = strings.TrimPrefix(strings.TrimPrefix(key, "https://"), "http://")
	key, _, _ = strings.Cut(key, "/")
	if key == "docker.io" || key == "registry-1.docker.io" {
		return name.DefaultRegistry
	}
	return key
}
