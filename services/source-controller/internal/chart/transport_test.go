package chart

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestBoundTransport_StopsReadingOnceTheBudgetIsSpent(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, strings.Repeat("x", 64<<10))
	}))
	t.Cleanup(srv.Close)
	dl := newBudget(1 << 10)
	client := &http.Client{Transport: &boundTransport{ctx: context.Background(), base: http.DefaultTransport, budget: dl}}

	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.ReadAll(resp.Body); !errors.Is(err, errDownloadTooLarge) {
		t.Fatalf("read error = %v, want errDownloadTooLarge", err)
	}
	if !dl.exhausted() {
		t.Fatal("budget not reported exhausted")
	}
}

// Helm's registry client sends requests with context.Background; the
// transport must still end them when the pull is cancelled.
func TestBoundTransport_CancelsRequestsWithThePullContext(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	client := &http.Client{Transport: &boundTransport{ctx: ctx, base: http.DefaultTransport, budget: newBudget(1 << 20)}}

	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatal("request succeeded after the pull was cancelled")
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}
