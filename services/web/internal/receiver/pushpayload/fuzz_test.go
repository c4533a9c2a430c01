package pushpayload

import "testing"

// FuzzPushPayload feeds arbitrary bytes to the push payload parser and the
// URL comparison: no input may panic, and every URL a payload names must
// name its own repository. Webhook receivers elsewhere have crashed on
// malformed payloads; this one must answer bad_request instead.
func FuzzPushPayload(f *testing.F) {
	for _, seed := range [][]byte{
		[]byte(`{}`),
		[]byte(`null`),
		[]byte(`[]`),
		[]byte(`{"repository":"git@github.com:acme/app"}`),
		[]byte(`{"repository":{"clone_url":"git@:"}}`),
		[]byte(`{"repository":{"clone_url":"https://[::1]:80/a"},"project":{"git_ssh_url":"@h:/"}}`),
		[]byte(`{"project":{"web_url":"https://%zz/a"}}`),
		[]byte("{\"repository\":{\"url\":\"ssh://u@h\u00e9st:1/\u0000.git/\"}}"),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		urls, err := URLs(body)
		if err != nil {
			return
		}
		for _, u := range urls {
			if _, ok := Key(u); ok && !Names(urls, u) {
				t.Fatalf("payload URL %q does not name its own repository", u)
			}
		}
		Names(urls, "https://github.com/acme/platform")
	})
}
