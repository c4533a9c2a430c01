package serve

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestListener_ReadyOnlyWhileServing runs listeners on loopback: one is
// not ready before it binds, serves once ready, stops cleanly with its
// context and is then no longer ready; one whose Before fails and one whose
// address is taken return an error naming the listener and are never ready.
func TestListener_ReadyOnlyWhileServing(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	hello := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "hello") })
	cases := []struct {
		name    string
		addr    string
		before  func(context.Context) error
		wantErr string
	}{
		{"serves", "127.0.0.1:0", nil, ""},
		{"waits for Before", "127.0.0.1:0", func(context.Context) error { time.Sleep(100 * time.Millisecond); return nil }, ""},
		{"Before fails", "127.0.0.1:0", func(context.Context) error { return errors.New("caches not synced") }, "test: caches not synced"},
		{"address taken", taken.Addr().String(), nil, "test: listening on " + taken.Addr().String()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := &Listener{Name: "test", Addr: c.addr, Handler: hello, Before: c.before}
			if l.NeedLeaderElection() {
				t.Fatal("a listener must serve on every replica")
			}
			if l.Ready(nil) == nil {
				t.Fatal("ready before Start")
			}
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() { done <- l.Start(ctx) }()
			if c.wantErr != "" {
				err := <-done
				cancel()
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("Start: %v, want an error containing %q", err, c.wantErr)
				}
				if l.Ready(nil) == nil {
					t.Fatal("ready although it never listened")
				}
				return
			}
			deadline := time.Now().Add(10 * time.Second)
			for l.Ready(nil) != nil {
				if time.Now().After(deadline) {
					t.Fatal("never ready")
				}
				time.Sleep(5 * time.Millisecond)
			}
			resp, err := http.Get("http://" + l.BoundAddr())
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(body) != "hello" {
				t.Fatalf("served %q", body)
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatalf("Start after the context ended: %v", err)
			}
			if l.Ready(nil) == nil {
				t.Fatal("still ready after it stopped")
			}
		})
	}
}
