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
)

// maxURLBytes bounds the url key; a longer value is refused, not parsed.
const maxURLBytes = 4096

// Destination is a sink's validated URL and, for webhook sinks, its HMAC key.
type Destination struct {
	URL     *url.URL
	HMACKey []byte
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
	default:
		return nil, fmt.Errorf("unknown sink type %q; use webhook or slack", sinkType)
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
