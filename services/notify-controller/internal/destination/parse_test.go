package destination

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

func secret(data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "payments", Name: "audit-webhook"}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

func TestParse_RefusesAnythingButHTTPSNamingSecretAndKey(t *testing.T) {
	const token = "T000/B000/XXXXsecrettoken"
	for _, tc := range []struct {
		name     string
		sinkType syncv1.SinkType
		data     map[string]string
		wantKey  string
		wantHost string
	}{
		{name: "webhook", sinkType: syncv1.SinkWebhook, data: map[string]string{"url": "https://audit.example.com/kuvryn-sync", "hmacKey": "k"}, wantHost: "audit.example.com"},
		{name: "slack without hmacKey", sinkType: syncv1.SinkSlack, data: map[string]string{"url": "https://hooks.slack.com/services/" + token}, wantHost: "hooks.slack.com"},
		{name: "surrounding whitespace", sinkType: syncv1.SinkSlack, data: map[string]string{"url": " https://hooks.slack.com/services/" + token + "\n"}, wantHost: "hooks.slack.com"},
		{name: "http refused", sinkType: syncv1.SinkSlack, data: map[string]string{"url": "http://hooks.slack.com/services/" + token}, wantKey: "url"},
		{name: "no scheme", sinkType: syncv1.SinkSlack, data: map[string]string{"url": "hooks.slack.com/services/" + token}, wantKey: "url"},
		{name: "other scheme", sinkType: syncv1.SinkSlack, data: map[string]string{"url": "ftp://hooks.slack.com/" + token}, wantKey: "url"},
		{name: "no host", sinkType: syncv1.SinkSlack, data: map[string]string{"url": "https:///services/" + token}, wantKey: "url"},
		{name: "credentials in the URL", sinkType: syncv1.SinkSlack, data: map[string]string{"url": "https://user:" + token + "@example.com/"}, wantKey: "url"},
		{name: "unparsable", sinkType: syncv1.SinkSlack, data: map[string]string{"url": "https://exa mple.com/%zz" + token}, wantKey: "url"},
		{name: "url missing", sinkType: syncv1.SinkSlack, data: map[string]string{}, wantKey: "url"},
		{name: "url empty", sinkType: syncv1.SinkSlack, data: map[string]string{"url": ""}, wantKey: "url"},
		{name: "webhook without hmacKey", sinkType: syncv1.SinkWebhook, data: map[string]string{"url": "https://audit.example.com/" + token}, wantKey: "hmacKey"},
		{name: "webhook with empty hmacKey", sinkType: syncv1.SinkWebhook, data: map[string]string{"url": "https://audit.example.com/" + token, "hmacKey": ""}, wantKey: "hmacKey"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Parse(secret(tc.data), tc.sinkType)
			if tc.wantKey == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if d.URL.Host != tc.wantHost {
					t.Errorf("host %q, want %q", d.URL.Host, tc.wantHost)
				}
				return
			}
			var perr *Error
			if !errors.As(err, &perr) {
				t.Fatalf("Parse = %v, want a refusal of key %s", err, tc.wantKey)
			}
			if perr.Key != tc.wantKey || perr.Secret != "audit-webhook" {
				t.Errorf("refused Secret %s key %s, want Secret audit-webhook key %s", perr.Secret, perr.Key, tc.wantKey)
			}
			msg := err.Error()
			if !strings.Contains(msg, "Secret audit-webhook") || !strings.Contains(msg, "key "+tc.wantKey) {
				t.Errorf("message %q does not name the Secret and the key", msg)
			}
			if strings.Contains(msg, token) || strings.Contains(msg, "example.com") {
				t.Errorf("message %q repeats the URL", msg)
			}
		})
	}
}
