package gitrepo

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// Keys of a Git credentials Secret.
const (
	UsernameKey   = "username"
	PasswordKey   = "password"
	TokenKey      = "token"
	IdentityKey   = "identity"
	KnownHostsKey = "known_hosts"
)

const (
	// tokenUsername is sent with a token given without a username; Git hosts
	// that accept tokens ignore the name.
	tokenUsername = "git"
	// defaultSSHUser is used when an SSH URL names no user.
	defaultSSHUser = "git"
)

// ErrCredentialsRefused marks a Secret that cannot be used as Git
// credentials; the controller reports it with reason CredentialsRefused.
var ErrCredentialsRefused = errors.New("credentials refused")

// Auth is the Git credentials of one Secret. It never prints its values.
type Auth struct {
	secret string

	basic *githttp.BasicAuth

	sshSigner         ssh.Signer
	hostKeyCallback   ssh.HostKeyCallback
	hostKeyAlgorithms func(hostWithPort string) []string
}

// String names the Secret and the kinds of credentials, never their values.
func (a *Auth) String() string {
	if a == nil {
		return "no credentials"
	}
	var kinds []string
	if a.basic != nil {
		kinds = append(kinds, "https basic auth")
	}
	if a.sshSigner != nil {
		kinds = append(kinds, "ssh key")
	}
	return fmt.Sprintf("Secret %s (%s)", a.secret, strings.Join(kinds, ", "))
}

// GoString keeps %#v from printing the credentials.
func (a *Auth) GoString() string { return a.String() }

// AuthFromSecret reads Git credentials from a Secret labelled
// sync.kuvryn.io/git-credentials: "true". HTTPS uses username and password,
// or password or token alone as a token; SSH uses identity (a private key,
// with password as its passphrase if it is encrypted) and known_hosts, which
// is required because host keys are always verified. Every error wraps
// ErrCredentialsRefused and names keys, never values.
func AuthFromSecret(secret *corev1.Secret) (*Auth, error) {
	if secret == nil {
		return nil, fmt.Errorf("%w: no Secret given", ErrCredentialsRefused)
	}
	name := secret.Namespace + "/" + secret.Name
	if secret.Labels[syncv1.GitCredentialsLabel] != "true" {
		return nil, fmt.Errorf("%w: Secret %s is not labelled %s: \"true\"", ErrCredentialsRefused, name, syncv1.GitCredentialsLabel)
	}
	data := secret.Data
	username, password, token := string(data[UsernameKey]), string(data[PasswordKey]), string(data[TokenKey])
	identity, knownHosts := data[IdentityKey], data[KnownHostsKey]

	a := &Auth{secret: name}
	switch {
	case username != "" && password == "" && token == "":
		return nil, fmt.Errorf("%w: Secret %s has %s but no %s or %s", ErrCredentialsRefused, name, UsernameKey, PasswordKey, TokenKey)
	case username != "" && password != "":
		a.basic = &githttp.BasicAuth{Username: username, Password: password}
	case username != "":
		a.basic = &githttp.BasicAuth{Username: username, Password: token}
	case token != "":
		a.basic = &githttp.BasicAuth{Username: tokenUsername, Password: token}
	case password != "" && len(identity) == 0:
		// Without an identity, a lone password is a token; with one, it is
		// the identity's passphrase and must not be sent to HTTPS hosts.
		a.basic = &githttp.BasicAuth{Username: tokenUsername, Password: password}
	}

	if len(identity) > 0 || len(knownHosts) > 0 {
		if err := a.setSSH(name, identity, password, knownHosts); err != nil {
			return nil, err
		}
	}
	if a.basic == nil && a.sshSigner == nil {
		return nil, fmt.Errorf("%w: Secret %s has none of %s and %s, %s, or %s and %s",
			ErrCredentialsRefused, name, UsernameKey, PasswordKey, TokenKey, IdentityKey, KnownHostsKey)
	}
	return a, nil
}

func (a *Auth) setSSH(name string, identity []byte, passphrase string, knownHosts []byte) error {
	switch {
	case len(identity) == 0:
		return fmt.Errorf("%w: Secret %s has %s but no %s", ErrCredentialsRefused, name, KnownHostsKey, IdentityKey)
	case len(bytes.TrimSpace(knownHosts)) == 0:
		return fmt.Errorf("%w: Secret %s has %s but no %s; SSH host keys must be pinned", ErrCredentialsRefused, name, IdentityKey, KnownHostsKey)
	}

	signer, err := ssh.ParsePrivateKey(identity)
	var missing *ssh.PassphraseMissingError
	if errors.As(err, &missing) {
		if passphrase == "" {
			return fmt.Errorf("%w: Secret %s: %s is encrypted and %s (its passphrase) is missing", ErrCredentialsRefused, name, IdentityKey, PasswordKey)
		}
		signer, err = ssh.ParsePrivateKeyWithPassphrase(identity, []byte(passphrase))
	}
	if err != nil {
		// The parser's message is not echoed: some quote the input.
		return fmt.Errorf("%w: Secret %s: %s is not a valid private key or its passphrase is wrong", ErrCredentialsRefused, name, IdentityKey)
	}

	if err := validateKnownHosts(knownHosts); err != nil {
		return fmt.Errorf("%w: Secret %s: %s %w", ErrCredentialsRefused, name, KnownHostsKey, err)
	}
	callback, algorithms, err := loadKnownHosts(knownHosts)
	if err != nil {
		return fmt.Errorf("%w: Secret %s: %s: %w", ErrCredentialsRefused, name, KnownHostsKey, err)
	}
	a.sshSigner = signer
	a.hostKeyCallback = callback
	a.hostKeyAlgorithms = algorithms
	return nil
}

// validateKnownHosts reports the first malformed line by number only.
func validateKnownHosts(data []byte) error {
	entries := 0
	for i, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		if _, _, _, _, _, err := ssh.ParseKnownHosts(line); err != nil {
			return fmt.Errorf("line %d is not a valid known_hosts entry", i+1)
		}
		entries++
	}
	if entries == 0 {
		return errors.New("has no host keys")
	}
	return nil
}

// loadKnownHosts builds the host key database, which go-git reads only from
// files. Host keys are public, so the short-lived file holds nothing secret.
func loadKnownHosts(data []byte) (ssh.HostKeyCallback, func(hostWithPort string) []string, error) {
	f, err := os.CreateTemp("", "known_hosts-")
	if err != nil {
		return nil, nil, fmt.Errorf("staging host keys: %w", err)
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return nil, nil, fmt.Errorf("staging host keys: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, nil, fmt.Errorf("staging host keys: %w", err)
	}
	db, err := gitssh.NewKnownHostsDb(f.Name())
	if err != nil {
		return nil, nil, fmt.Errorf("loading host keys: %w", err)
	}
	return db.HostKeyCallback(), db.HostKeyAlgorithms, nil
}

// method chooses the transport credentials for url. It refuses SSH without
// pinned host keys, because go-git would otherwise fall back to the
// process's own known_hosts and SSH agent, and schemes other than HTTP(S)
// and SSH, which would read the controller's own disk.
func (a *Auth) method(key RepoKey, rawURL string) (transport.AuthMethod, error) {
	ep, err := transport.NewEndpoint(rawURL)
	if err != nil {
		return nil, fmt.Errorf("Repository %s: spec.git.url is not a valid Git URL", key)
	}
	switch ep.Protocol {
	case "http", "https":
		if a == nil || a.basic == nil {
			return nil, nil
		}
		return a.basic, nil
	case "ssh":
		if a == nil || a.sshSigner == nil {
			return nil, fmt.Errorf("Repository %s: an SSH URL needs spec.git.secretRef with %s and %s", key, IdentityKey, KnownHostsKey)
		}
		user := ep.User
		if user == "" {
			user = defaultSSHUser
		}
		port := ep.Port
		if port == 0 {
			port = 22
		}
		return &gitssh.PublicKeys{
			User:   user,
			Signer: a.sshSigner,
			HostKeyCallbackHelper: gitssh.HostKeyCallbackHelper{
				HostKeyCallback:   a.hostKeyCallback,
				HostKeyAlgorithms: a.hostKeyAlgorithms(net.JoinHostPort(ep.Host, strconv.Itoa(port))),
			},
		}, nil
	default:
		return nil, fmt.Errorf("Repository %s: spec.git.url scheme %q is not supported; use https://, http:// or ssh://", key, ep.Protocol)
	}
}
