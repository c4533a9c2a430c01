package destination

import (
	"strings"
	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// FuzzParse: whatever a Secret holds, Parse accepts only https URLs with a
// host, and a refusal never repeats the value it refused.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"https://audit.example.com/kuvryn-sync",
		"http://audit.example.com/kuvryn-sync",
		"https://hooks.slack.com/services/T0/B0/secret",
		"https://user:pass@example.com/",
		"HTTPS://EXAMPLE.COM",
		"https://[::1]:8443/x",
		"https://%zz",
		"://",
		"",
		"javascript:alert(1)",
	} {
		f.Add(seed, "key")
	}
	f.Fuzz(func(t *testing.T, raw, key string) {
		for _, typ := range []syncv1.SinkType{syncv1.SinkWebhook, syncv1.SinkSlack} {
			d, err := Parse(secret(map[string]string{KeyURL: raw, KeyHMACKey: key}), typ)
			if err != nil {
				// Values this short can coincide with words of the message.
				if len(strings.TrimSpace(raw)) >= 16 && strings.Contains(err.Error(), strings.TrimSpace(raw)) {
					t.Fatalf("refusal %q repeats the URL", err)
				}
				continue
			}
			if !strings.EqualFold(d.URL.Scheme, "https") || d.URL.Hostname() == "" || d.URL.User != nil {
				t.Fatalf("accepted %q as %+v", raw, d.URL)
			}
			if typ == syncv1.SinkWebhook && len(d.HMACKey) == 0 {
				t.Fatalf("webhook sink accepted without hmacKey")
			}
		}
	})
}
