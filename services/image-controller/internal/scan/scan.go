// Package scan reads a registry for an ImagePolicy with go-containerregistry:
// it lists tags (bounded), selects one with the policy and resolves its
// digest. Every request passes a per-registry-host rate limit and is
// counted in kuvryn_sync_image_scans_total.
package scan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"golang.org/x/time/rate"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/image-controller/internal/policy"
	"github.com/kuvryn/kuvryn-sync/services/image-controller/internal/setters"
)

const (
	// DefaultMaxTags bounds the tags read from one repository, so a
	// registry returning a million tags costs bounded memory and time.
	DefaultMaxTags = 10000
	// pageSize is asked of registries that paginate tag lists.
	pageSize = 1000
	// maxResponseBytes bounds one registry response body; a tag page of
	// pageSize tags is far below it.
	maxResponseBytes = 4 << 20
)

// ErrNoMatchingTag is returned when no tag satisfies the policy.
var ErrNoMatchingTag = policy.ErrNoMatchingTag

// Result is one scan's outcome.
type Result struct {
	Image setters.Image
	// Tags is how many tags were read; Truncated says the list was cut at
	// the scanner's MaxTags.
	Tags      int
	Truncated bool
}

// Scanner scans registries. Its zero value is not usable: build it with New.
type Scanner struct {
	maxTags int
	limits  *HostLimits
	base    http.RoundTripper
}

// Options configure a Scanner.
type Options struct {
	// QPS and Burst bound the requests sent to one registry host.
	QPS   float64
	Burst int
	// MaxTags bounds the tags read per scan; 0 is DefaultMaxTags.
	MaxTags int
	// Transport is the base transport; nil is http.DefaultTransport.
	Transport http.RoundTripper
}

// New builds a Scanner.
func New(o Options) *Scanner {
	s := &Scanner{maxTags: o.MaxTags, limits: NewHostLimits(rate.Limit(o.QPS), o.Burst), base: o.Transport}
	if s.maxTags <= 0 {
		s.maxTags = DefaultMaxTags
	}
	if s.base == nil {
		s.base = http.DefaultTransport
	}
	return s
}

// Scan selects the image for spec with auth (nil is anonymous).
func (s *Scanner) Scan(ctx context.Context, spec syncv1.ImagePolicySpec, auth authn.Authenticator) (Result, error) {
	repo, err := name.NewRepository(spec.Image)
	if err != nil {
		return Result{}, &policy.InvalidError{Field: "spec.image", Msg: fmt.Sprintf("%q is not an image repository: %v", spec.Image, err)}
	}
	var sel policy.Selector
	if spec.Policy.Digest == nil {
		if sel, err = policy.New(spec.Policy); err != nil {
			return Result{}, err
		}
	}
	if auth == nil {
		auth = authn.Anonymous
	}
	puller, err := remote.NewPuller(remote.WithContext(ctx), remote.WithAuth(auth),
		remote.WithTransport(s.transport()), remote.WithPageSize(pageSize))
	if err != nil {
		return Result{}, err
	}

	var res Result
	tag := ""
	if spec.Policy.Digest != nil {
		tag = spec.Policy.Digest.Tag
	} else {
		tags, truncated, err := s.list(ctx, puller, repo)
		if err != nil {
			return Result{}, fmt.Errorf("listing tags of %s: %w", repo, err)
		}
		res.Tags, res.Truncated = len(tags), truncated
		if tag, err = sel.Select(tags); err != nil {
			return res, err
		}
	}
	ref := repo.Tag(tag)
	desc, err := puller.Head(ctx, ref)
	if err != nil {
		return res, fmt.Errorf("resolving %s: %w", ref, err)
	}
	res.Image = setters.Image{Name: spec.Image, Tag: tag, Digest: desc.Digest.String()}
	return res, nil
}

// list reads tag pages until the registry has no more or maxTags are read.
func (s *Scanner) list(ctx context.Context, p *remote.Puller, repo name.Repository) ([]string, bool, error) {
	l, err := p.Lister(ctx, repo)
	if err != nil {
		return nil, false, err
	}
	var tags []string
	for l.HasNext() {
		page, err := l.Next(ctx)
		if err != nil {
			return nil, false, err
		}
		for _, t := range page.Tags {
			if len(tags) == s.maxTags {
				return tags, true, nil
			}
			tags = append(tags, t)
		}
	}
	return tags, false, nil
}

func (s *Scanner) transport() http.RoundTripper {
	return &limitedTransport{base: s.base, limits: s.limits}
}

// HostLimits holds one token bucket per registry host.
type HostLimits struct {
	limit rate.Limit
	burst int

	mu     sync.Mutex
	byHost map[string]*rate.Limiter
}

// NewHostLimits allows each host limit requests a second after a burst.
func NewHostLimits(limit rate.Limit, burst int) *HostLimits {
	if burst < 1 {
		burst = 1
	}
	return &HostLimits{limit: limit, burst: burst, byHost: map[string]*rate.Limiter{}}
}

// Wait blocks until host may receive one more request.
func (h *HostLimits) Wait(ctx context.Context, host string) error {
	h.mu.Lock()
	l, ok := h.byHost[host]
	if !ok {
		l = rate.NewLimiter(h.limit, h.burst)
		h.byHost[host] = l
	}
	h.mu.Unlock()
	return l.Wait(ctx)
}

// limitedTransport waits for the host's token before every request (token
// exchanges included, since they count against the same registry), counts
// each request sent, and caps each response body.
type limitedTransport struct {
	base   http.RoundTripper
	limits *HostLimits
}

func (t *limitedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.limits.Wait(req.Context(), req.URL.Host); err != nil {
		return nil, fmt.Errorf("waiting for the rate limit of %s: %w", req.URL.Host, err)
	}
	resp, err := t.base.RoundTrip(req)
	requests.WithLabelValues(requestResult(req, resp, err)).Inc()
	if err != nil {
		return nil, err
	}
	resp.Body = &cappedBody{rc: resp.Body, left: maxResponseBytes, host: req.URL.Host}
	return resp, nil
}

type cappedBody struct {
	rc   io.ReadCloser
	left int64
	host string
}

// ErrResponseTooLarge is returned when a registry response exceeds the cap.
var ErrResponseTooLarge = errors.New("registry response too large")

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, fmt.Errorf("%w: %s sent more than %d bytes", ErrResponseTooLarge, b.host, maxResponseBytes)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n, fmt.Errorf("%w: %s sent more than %d bytes", ErrResponseTooLarge, b.host, maxResponseBytes)
	}
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }
