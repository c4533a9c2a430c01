package chart

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
)

const maxRedirects = 10

// httpClient builds the client for one pull. Redirects may not downgrade
// to plain HTTP unless the chart is insecure; Go's client already drops
// the Authorization header on redirects to another host.
func (p *Puller) httpClient(insecure bool) *http.Client {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = &tls.Config{RootCAs: p.RootCAs, MinVersion: tls.VersionTLS12}
	return &http.Client{
		Transport: transport,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxRedirects {
				return fmt.Errorf("stopped after %d redirects", maxRedirects)
			}
			if req.URL.Scheme != "https" && !insecure {
				return fmt.Errorf("refusing redirect to %s: plain HTTP needs insecure: true", req.URL.Redacted())
			}
			return nil
		},
	}
}

// boundTransport ties the requests of Helm's registry client, which uses
// context.Background, to the pull's context, and caps the bytes all their
// response bodies may deliver.
type boundTransport struct {
	ctx    context.Context
	base   http.RoundTripper
	budget *budget
}

func (t *boundTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.ctx.Err(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(req.Context())
	stop := context.AfterFunc(t.ctx, cancel)
	release := func() {
		stop()
		cancel()
	}
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		release()
		return nil, err
	}
	resp.Body = &budgetBody{body: resp.Body, budget: t.budget, release: release}
	return resp, nil
}

// errDownloadTooLarge ends a read once the budget is spent.
var errDownloadTooLarge = errors.New("download exceeds the chart size limit")

// budget is the number of response bytes one pull may still read.
type budget struct {
	remaining atomic.Int64
}

func newBudget(n int64) *budget {
	b := &budget{}
	b.remaining.Store(n)
	return b
}

func (b *budget) spend(n int) bool {
	return b.remaining.Add(-int64(n)) >= 0
}

func (b *budget) exhausted() bool {
	return b.remaining.Load() < 0
}

type budgetBody struct {
	body    io.ReadCloser
	budget  *budget
	release func()
}

func (r *budgetBody) Read(p []byte) (int, error) {
	n, err := r.body.Read(p)
	if !r.budget.spend(n) {
		return n, errDownloadTooLarge
	}
	return n, err
}

func (r *budgetBody) Close() error {
	err := r.body.Close()
	r.release()
	return err
}
