package writeback

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	corev1 "k8s.io/api/core/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// ErrCredentialsRefused marks a Secret that cannot be used to push; the
// controller reports it with reason CredentialsRefused.
var ErrCredentialsRefused = errors.New("credentials refused")

// tokenUsername is sent with a token given without a username; Git hosts
// that accept tokens ignore the name.
const tokenUsername = "git"

// AuthFromSecret reads push credentials from a Secret labelled
// sync.kuvryn.io/git-credentials: "true": username and password, or a token
// (or password) alone, for an http(s) repoURL. Errors name keys, never values.
func AuthFromSecret(secret *corev1.Secret, repoURL string) (transport.AuthMethod, error) {
	id := secret.Namespace + "/" + secret.Name
	if secret.Labels[syncv1.GitCredentialsLabel] != "true" {
		return nil, fmt.Errorf("%w: Secret %s is not labelled %s: \"true\"", ErrCredentialsRefused, id, syncv1.GitCredentialsLabel)
	}
	u, err := url.Parse(repoURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("%w: image write-back pushes over https:// or http:// only; spec.git.url is not one", ErrCredentialsRefused)
	}
	username, password, token := string(secret.Data["username"]), string(secret.Data["password"]), string(secret.Data["token"])
	switch {
	case username != "" && password != "":
		return &githttp.BasicAuth{Username: username, Password: password}, nil
	case username != "" && token != "":
		return &githttp.BasicAuth{Username: username, Password: token}, nil
	case token != "":
		return &githttp.BasicAuth{Username: tokenUsername, Password: token}, nil
	case password != "" && username == "":
		return &githttp.BasicAuth{Username: tokenUsername, Password: password}, nil
	}
	return nil, fmt.Errorf("%w: Secret %s needs username and password, or token", ErrCredentialsRefused, id)
}
