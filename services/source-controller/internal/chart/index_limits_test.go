package chart

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	testchart "github.com/kuvryn/kuvryn-sync/pkg/testkit/chart"
)

// aliasBomb is a small index.yaml whose aliases expand to 10^9 strings.
func aliasBomb() []byte {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nentries: {}\nl0: &l0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 9; i++ {
		prev := "*l" + strconv.Itoa(i-1)
		b.WriteString("l" + strconv.Itoa(i) + ": &l" + strconv.Itoa(i) + " [" + strings.Repeat(prev+", ", 9) + prev + "]\n")
	}
	return []byte(b.String())
}

func TestPull_HTTPSRepositoryBoundsTheIndex(t *testing.T) {
	const limit = 64 << 10
	huge := []byte("apiVersion: v1\nentries: {}\npadding: " + strings.Repeat("x", 2*limit) + "\n")
	for _, tc := range []struct {
		name string
		// announce sends Content-Length, so the pull refuses before reading.
		announce bool
		index    []byte
		want     string
	}{
		{name: "over the limit, announced", announce: true, index: huge, want: "over the 65536 byte limit"},
		{name: "over the limit, streamed", index: huge, want: "more than the 65536 byte limit"},
		{name: "alias bomb under the limit", index: aliasBomb(), want: "excessive aliasing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &chartRepo{}
			r.HelmRepository = testchart.StartHelmRepository(true, func(h http.Handler) http.Handler {
				return r.wrap(nil, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
					if tc.announce {
						w.Header().Set("Content-Length", strconv.Itoa(len(tc.index)))
					}
					h.ServeHTTP(w, req)
				}))
			})
			t.Cleanup(r.Close)
			r.srv = r.Server()
			r.serve("/stable/index.yaml", tc.index)
			p := r.puller(t)
			p.MaxIndexBytes = limit

			_, err := p.Pull(context.Background(), r.ref("api", "1.0.0"), "payments", nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
			if n := r.requests(); n != 1 {
				t.Fatalf("%d requests, want only the index's", n)
			}
		})
	}
}
