package gitrepo

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"

	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

type sshFixture struct {
	identity          string // unencrypted private key PEM
	encryptedIdentity string // the same key, encrypted with passphrase
	passphrase        string
	hostKey           ssh.PublicKey
	otherHostKey      ssh.PublicKey
	knownHosts        string // pins hostKey for [127.0.0.1]:2222 and example.com
}

func newSSHFixture(t *testing.T) sshFixture {
	t.Helper()
	_, clientKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(clientKey, "")
	if err != nil {
		t.Fatal(err)
	}
	const passphrase = "correct horse"
	encrypted, err := ssh.MarshalPrivateKeyWithPassphrase(clientKey, "", []byte(passphrase))
	if err != nil {
		t.Fatal(err)
	}
	hostKey, otherHostKey := newPublicKey(t), newPublicKey(t)
	line := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(hostKey)))
	return sshFixture{
		identity:          string(pem.EncodeToMemory(block)),
		encryptedIdentity: string(pem.EncodeToMemory(encrypted)),
		passphrase:        passphrase,
		hostKey:           hostKey,
		otherHostKey:      otherHostKey,
		knownHosts:        fmt.Sprintf("# pinned host keys\n[127.0.0.1]:2222 %s\nexample.com %s\n", line, line),
	}
}

func newPublicKey(t *testing.T) ssh.PublicKey {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func TestAuthFromSecret_RefusesUnusableSecrets(t *testing.T) {
	fx := newSSHFixture(t)
	unlabelled := labelledSecret(map[string]string{UsernameKey: "git", PasswordKey: "hunter2"})
	unlabelled.Labels = nil
	wrongLabel := labelledSecret(map[string]string{TokenKey: "hunter2"})
	wrongLabel.Labels[syncv1.GitCredentialsLabel] = "yes"

	for _, tc := range []struct {
		name    string
		secret  *corev1.Secret
		data    map[string]string
		wantMsg string
	}{
		{name: "unlabelled", secret: unlabelled, wantMsg: `Secret team-a/git-creds is not labelled sync.kuvryn.io/git-credentials: "true"`},
		{name: "label not true", secret: wrongLabel, wantMsg: "is not labelled"},
		{name: "empty", data: map[string]string{}, wantMsg: "has none of username and password, token, or identity and known_hosts"},
		{name: "username without password", data: map[string]string{UsernameKey: "git"}, wantMsg: "has username but no password or token"},
		{name: "identity without known_hosts", data: map[string]string{IdentityKey: fx.identity}, wantMsg: "has identity but no known_hosts; SSH host keys must be pinned"},
		{name: "identity with blank known_hosts", data: map[string]string{IdentityKey: fx.identity, KnownHostsKey: " \n"}, wantMsg: "no known_hosts"},
		{name: "known_hosts without identity", data: map[string]string{KnownHostsKey: fx.knownHosts}, wantMsg: "has known_hosts but no identity"},
		{name: "identity that is not a key", data: map[string]string{IdentityKey: "hunter2-not-a-key", KnownHostsKey: fx.knownHosts}, wantMsg: "identity is not a valid private key"},
		{name: "encrypted identity without passphrase", data: map[string]string{IdentityKey: fx.encryptedIdentity, KnownHostsKey: fx.knownHosts}, wantMsg: "identity is encrypted and password (its passphrase) is missing"},
		{name: "encrypted identity with wrong passphrase", data: map[string]string{IdentityKey: fx.encryptedIdentity, PasswordKey: "hunter2", KnownHostsKey: fx.knownHosts}, wantMsg: "or its passphrase is wrong"},
		{name: "malformed known_hosts", data: map[string]string{IdentityKey: fx.identity, KnownHostsKey: fx.knownHosts + "example.org hunter2\n"}, wantMsg: "known_hosts line 4 is not a valid known_hosts entry"},
		{name: "known_hosts with only comments", data: map[string]string{IdentityKey: fx.identity, KnownHostsKey: "# nothing\n"}, wantMsg: "known_hosts has no host keys"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			secret := tc.secret
			if secret == nil {
				secret = labelledSecret(tc.data)
			}
			auth, err := AuthFromSecret(secret)
			if err == nil {
				t.Fatalf("AuthFromSecret = %v, want an error", auth)
			}
			if !errors.Is(err, ErrCredentialsRefused) {
				t.Errorf("error %v does not wrap ErrCredentialsRefused", err)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("error %q does not contain %q", err, tc.wantMsg)
			}
			// Short values such as "git" also occur in key names.
			for _, value := range secret.Data {
				if len(value) >= 7 && strings.Contains(err.Error(), string(value)) {
					t.Errorf("error %q leaks a Secret value", err)
				}
			}
			if strings.Contains(err.Error(), "PRIVATE KEY") {
				t.Errorf("error %q leaks the identity", err)
			}
		})
	}
}

func TestAuthFromSecret_SSHPinsHostKeys(t *testing.T) {
	fx := newSSHFixture(t)
	for _, tc := range []struct {
		name     string
		data     map[string]string
		url      string
		wantUser string
		hostPort string
	}{
		{"ssh URL with port", map[string]string{IdentityKey: fx.identity, KnownHostsKey: fx.knownHosts}, "ssh://deploy@127.0.0.1:2222/org/repo.git", "deploy", "127.0.0.1:2222"},
		{"scp-like URL", map[string]string{IdentityKey: fx.identity, KnownHostsKey: fx.knownHosts}, "git@example.com:org/repo.git", "git", "example.com:22"},
		{"ssh URL without user", map[string]string{IdentityKey: fx.identity, KnownHostsKey: fx.knownHosts}, "ssh://example.com/org/repo.git", "git", "example.com:22"},
		{"encrypted identity with passphrase", map[string]string{IdentityKey: fx.encryptedIdentity, PasswordKey: fx.passphrase, KnownHostsKey: fx.knownHosts}, "ssh://example.com/org/repo.git", "git", "example.com:22"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			auth, err := AuthFromSecret(labelledSecret(tc.data))
			if err != nil {
				t.Fatal(err)
			}
			method, err := auth.method(keyApp, tc.url)
			if err != nil {
				t.Fatal(err)
			}
			keys, ok := method.(*gitssh.PublicKeys)
			if !ok {
				t.Fatalf("method is %T, want *ssh.PublicKeys", method)
			}
			if keys.User != tc.wantUser {
				t.Errorf("user = %q, want %q", keys.User, tc.wantUser)
			}
			if keys.HostKeyCallback == nil {
				t.Fatal("no host key callback: go-git would fall back to the process's known_hosts")
			}
			if len(keys.HostKeyAlgorithms) == 0 {
				t.Error("no host key algorithms negotiated from known_hosts")
			}
			addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 22}
			if err := keys.HostKeyCallback(tc.hostPort, addr, fx.hostKey); err != nil {
				t.Errorf("pinned host key refused: %v", err)
			}
			if err := keys.HostKeyCallback(tc.hostPort, addr, fx.otherHostKey); err == nil {
				t.Error("a host key that is not pinned was accepted")
			}
			if err := keys.HostKeyCallback("unknown.example.com:22", addr, fx.hostKey); err == nil {
				t.Error("a host missing from known_hosts was accepted")
			}
		})
	}
}

func TestAuth_HTTPSCredentialsAndRedaction(t *testing.T) {
	fx := newSSHFixture(t)
	for _, tc := range []struct {
		name         string
		data         map[string]string
		wantUser     string
		wantPassword string
		wantString   string
	}{
		{"username and password", map[string]string{UsernameKey: "ci", PasswordKey: "s3cret-pw"}, "ci", "s3cret-pw", "Secret team-a/git-creds (https basic auth)"},
		{"username and token", map[string]string{UsernameKey: "ci", TokenKey: "s3cret-tok"}, "ci", "s3cret-tok", "Secret team-a/git-creds (https basic auth)"},
		{"token alone", map[string]string{TokenKey: "s3cret-tok"}, tokenUsername, "s3cret-tok", "Secret team-a/git-creds (https basic auth)"},
		{"password alone", map[string]string{PasswordKey: "s3cret-pw"}, tokenUsername, "s3cret-pw", "Secret team-a/git-creds (https basic auth)"},
		{"identity passphrase is not sent over HTTPS", map[string]string{IdentityKey: fx.encryptedIdentity, PasswordKey: fx.passphrase, KnownHostsKey: fx.knownHosts}, "", "", "Secret team-a/git-creds (ssh key)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			auth, err := AuthFromSecret(labelledSecret(tc.data))
			if err != nil {
				t.Fatal(err)
			}
			method, err := auth.method(keyApp, "https://example.com/org/repo.git")
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantUser == "" {
				if method != nil {
					t.Fatalf("method = %v, want none", method)
				}
			} else {
				basic, ok := method.(*githttp.BasicAuth)
				if !ok || basic.Username != tc.wantUser || basic.Password != tc.wantPassword {
					t.Fatalf("method = %#v, want basic auth for %s", method, tc.wantUser)
				}
			}
			for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
				printed := fmt.Sprintf(format, auth)
				if printed != tc.wantString {
					t.Errorf("Sprintf(%q) = %q, want %q", format, printed, tc.wantString)
				}
			}
		})
	}
}
