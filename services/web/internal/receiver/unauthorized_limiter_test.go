package receiver

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"slices"
	"testing"
	"time"
)

// postFrom sends body to path from the loopback address ip, so that the
// receiver sees a remote address of its own.
func (f *fixture) postFrom(ip string, path string, header map[string]string, body []byte) int {
	f.t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	c := &http.Client{Transport: &http.Transport{
		DialContext:       d.DialContext,
		DisableKeepAlives: true,
	}}
	req, err := http.NewRequest(http.MethodPost, f.url+path, bytes.NewReader(body))
	must(f.t, err)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	must(f.t, err)
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	must(f.t, err)
	return resp.StatusCode
}

// TestReceiver_LimiterAnswersUnknownAndExistingAlike freezes the clock and
// sends 60 requests with a bad signature from each of three addresses: all
// to an existing Repository, all to an unknown one, and alternating. The
// three get the same answers in the same order, the address's 50 then 429,
// because a request is counted against a Repository's bucket only once
// authenticated; and the existing Repository's bucket is still full
// afterwards, for its ten signed requests.
func TestReceiver_LimiterAnswersUnknownAndExistingAlike(t *testing.T) {
	clock := time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)
	f := start(t, fixtureOptions{now: func() time.Time { return clock }})
	f.secret("hook", "s3cret")
	f.repository("platform", "https://github.com/acme/platform", "hook")

	body := githubPush("acme/platform")
	bad := map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": sign(body, "guess")}
	existing, unknown := "/hooks/"+f.ns+"/platform", "/hooks/"+f.ns+"/nope"
	cases := []struct {
		name string
		ip   string
		path func(i int) string
	}{
		{"existing Repository", "127.0.0.2", func(int) string { return existing }},
		{"unknown Repository", "127.0.0.3", func(int) string { return unknown }},
		{"both, alternating", "127.0.0.4", func(i int) string { return []string{existing, unknown}[i%2] }},
	}
	want := append(slices.Repeat([]int{http.StatusUnauthorized}, addressBurst),
		slices.Repeat([]int{http.StatusTooManyRequests}, 10)...)
	for _, c := range cases {
		var got []int
		for i := range len(want) {
			got = append(got, f.postFrom(c.ip, c.path(i), bad, body))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: statuses %v, want %v", c.name, got, want)
		}
	}

	clock = clock.Add(time.Minute)
	ping := map[string]string{"X-GitHub-Event": "ping", "X-Hub-Signature-256": sign(body, "s3cret")}
	for i := 1; i <= objectBurst; i++ {
		if s := f.postFrom("127.0.0.2", existing, ping, body); s != http.StatusOK {
			t.Fatalf("signed request %d after the refused ones: %d, want 200", i, s)
		}
	}
}
