package receiver

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// countingBody counts the bytes the handler reads from a request body.
type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// TestReceiver_BodyOverOneMBIsRefusedWithoutReadingPastTheLimit sends
// bodies around the 1 MB limit, with and without a Content-Length: one byte
// over gets 413 having read at most the limit and one byte, a declared
// length over the limit gets 413 having read nothing, a body of exactly the
// limit is read and authenticated, and a body that cannot be read (broken
// chunked encoding) gets 400.
func TestReceiver_BodyOverOneMBIsRefusedWithoutReadingPastTheLimit(t *testing.T) {
	var read atomic.Int64
	f := start(t, fixtureOptions{wrap: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			req.Body = countingBody{req.Body, &read}
			h.ServeHTTP(w, req)
		})
	}})
	f.secret("hook", "s3cret")
	f.repository("platform", "https://github.com/acme/platform", "hook")
	path := "/hooks/" + f.ns + "/platform"

	// A JSON document of exactly n bytes.
	payload := func(n int) []byte {
		return []byte(`{"zen":"` + strings.Repeat("a", n-len(`{"zen":""}`)) + `"}`)
	}
	cases := []struct {
		name    string
		body    []byte
		chunked bool
		status  int
		maxRead int64
	}{
		{"1 MB + 1 byte, chunked", payload(MaxBodyBytes + 1), true, http.StatusRequestEntityTooLarge, MaxBodyBytes + 1},
		{"4 MB, chunked", payload(4 * MaxBodyBytes), true, http.StatusRequestEntityTooLarge, MaxBodyBytes + 1},
		{"1 MB + 1 byte, Content-Length", payload(MaxBodyBytes + 1), false, http.StatusRequestEntityTooLarge, 0},
		{"exactly 1 MB", payload(MaxBodyBytes), false, http.StatusOK, MaxBodyBytes},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			read.Store(0)
			var body io.Reader = bytes.NewReader(c.body)
			if c.chunked {
				// A reader of unknown length is sent chunked.
				body = io.MultiReader(body)
			}
			req, err := http.NewRequest(http.MethodPost, f.url+path, body)
			must(t, err)
			req.Header.Set("X-GitHub-Event", "ping")
			req.Header.Set("X-Hub-Signature-256", sign(c.body, "s3cret"))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				// The server may close before the client has sent it all.
				t.Logf("client: %v", err)
			} else {
				resp.Body.Close()
				if resp.StatusCode != c.status {
					t.Fatalf("status %d, want %d", resp.StatusCode, c.status)
				}
			}
			if n := read.Load(); n > c.maxRead {
				t.Fatalf("the receiver read %d bytes of the body, want at most %d", n, c.maxRead)
			}
		})
	}

	t.Run("unreadable body", func(t *testing.T) {
		conn, err := net.Dial("tcp", f.addr)
		must(t, err)
		defer conn.Close()
		must(t, conn.SetDeadline(time.Now().Add(30*time.Second)))
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nTransfer-Encoding: chunked\r\nX-GitHub-Event: ping\r\n\r\nnot-a-chunk-size\r\n", path, f.addr)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		must(t, err)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("status %d, want 400", resp.StatusCode)
		}
	})

	if c := f.counts(); c["too_large"] != 3 || c["ping"] != 1 || c["bad_request"] != 1 {
		t.Fatalf("counts %v, want too_large 3, ping 1, bad_request 1", c)
	}
}
