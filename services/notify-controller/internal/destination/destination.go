// Package destination reads where a NotificationSink delivers from its
// Secret. The URL is a credential (a Slack incoming-webhook URL grants
// posting to a channel), so no error this package returns contains it.
package destination

import (
	"fmt"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// Keys of the sink Secret.
const (
	KeyURL     = "url"
	KeyHMACKey = "hmacKey"
	// KeyToken is the access token of github and gitlab sinks.
	KeyToken = "token"
)

// maxTokenBytes bounds the token key.
const maxTokenBytes = 1024

// maxURLBytes bounds the url key; a longer value is refused, not parsed.
const maxURLBytes = 4096

// Destination is a sink's validated URL and, for webhook sinks, its HMAC
// key; for github and gitlab sinks, the repository and token.
type Destination struct {
	URL     *url.URL
	HMACKey []byte
	// Repository is set for github and gitlab sinks; URL is then its web address.
	Repository *Repository
	Token      string
}

// Error is a refused sink Secret. Its message names the Secret and the key,
// never the key's value.
type Error struct {
	Secret string
	Key    string
	// Problem says what is wrong, without the value.
	Problem string
}

func (e *Error) Error() string {
	return fmt.Sprintf("Secret %s, key %s: %s", e.Secret, e.Key, e.Problem)
}

// Parse validates the Secret of a sink of type sinkType: url must be an
// absolute https URL with a host and no credentials in it, and webhook sinks
// need a non-empty hmacKey.
func Parse(secret *corev1.Secret, sinkType syncv1.SinkType) (*Destination, error) {
	refuse := func(key, problem string) error {
		return &Error{Secret: secret.Name, Key: key, Problem: problem}
	}
	raw, ok := secret.Data[KeyURL]
	if !ok {
		return nil, refuse(KeyURL, "missing")
	}
	u, problem := parseURL(string(raw))
	if problem != "" {
		return nil, refuse(KeyURL, problem)
	}
	d := &Destination{URL: u}
	switch sinkType {
	case syncv1.SinkWebhook:
		key := secret.Data[KeyHMACKey]
		if len(key) == 0 {
			return nil, refuse(KeyHMACKey, "missing or empty; webhook sinks sign every body with it")
		}
		d.HMACKey = key
	case syncv1.SinkSlack:
	case syncv1.SinkGitHub, syncv1.SinkGitLab:
		repo, problem := ParseRepository(u, sinkType)
		if problem != "" {
			return nil, refuse(KeyURL, problem)
		}
		token, problem := parseToken(secret.Data[KeyToken])
		if problem != "" {
			return nil, refuse(KeyToken, problem)
		}
		d.Repository, d.Token = repo, token
	default:
		return nil, fmt.Errorf("unknown sink type %q; use webhook, slack, github or gitlab", sinkType)
	}
	return d, nil
}

// parseURL returns the URL or what is wrong with it, in words that do not
// repeat any part of it.
func parseURL(raw string) (*url.URL, string) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, "empty"
	}
	if len(raw) > maxURLBytes {
		return nil, fmt.Sprintf("longer than %d bytes", maxURLBytes)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, "not a valid URL"
	}
	switch {
	case !strings.EqualFold(u.Scheme, "https"):
		return nil, "must be an https:// URL; other schemes, http:// included, are refused"
	case u.Host == "" || u.Hostname() == "":
		return nil, "must name a host"
	case u.User != nil:
		return nil, "must not hold a user name or password"
	case u.Fragment != "":
		return nil, "must not have a #fragment"
	}
	return u, ""
}

// parseToken returns the token or what is wrong with it. It goes into a
// header, so whitespace inside it or control characters are refused.
func parseToken(raw []byte) (string, string) {
	token := strings.TrimSpace(string(raw))
	switch {
	case token == "":
		return "", "missing or empty; github and gitlab sinks authenticate with it"
	case len(token) > maxTokenBytes:
		return "", fmt.Sprintf("longer than %d bytes", maxTokenBytes)
	case strings.ContainsFunc(token, func(r rune) bool { return r <= ' ' || r == 0x7f }):
		return "", "must not contain spaces or control characters"
	}
	return token, ""
}
