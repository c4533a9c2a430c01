package harness

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Sink is an https receiver on loopback for NotificationSinks, for the e2e
// tests and `make demo`: it records every request and, with an output,
// prints it. Its certificate is self-signed; start the notify-controller
// with SinkFlags so it trusts it.
type Sink struct {
	srv *httptest.Server
	// CAFile holds the certificate in PEM, for --sink-ca-file.
	CAFile string
	// Key verifies X-Kuvryn-Sync-Signature when set.
	Key []byte

	out      io.Writer
	mu       sync.Mutex
	requests []SinkRequest
	failWith int
}

// SinkRequest is one delivery the Sink received.
type SinkRequest struct {
	Path   string
	Header http.Header
	Body   []byte
	// SignatureOK says whether the signature matched Key.
	SignatureOK bool
	At          time.Time
	// Status is the HTTP status the Sink answered.
	Status int
}

// StartSink serves on a free loopback port, writing its certificate into
// dir; out, if not nil, receives a description of every request.
func StartSink(dir string, key []byte, out io.Writer) (*Sink, error) {
	s := &Sink{Key: key, out: out}
	s.srv = httptest.NewTLSServer(http.HandlerFunc(s.serve))
	s.CAFile = filepath.Join(dir, "sink-ca.crt")
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.srv.Certificate().Raw})
	if err := os.WriteFile(s.CAFile, cert, 0o644); err != nil {
		s.srv.Close()
		return nil, err
	}
	return s, nil
}

// SinkFlags are the notify-controller flags that trust the Sink.
func (s *Sink) SinkFlags() []string { return []string{"--sink-ca-file=" + s.CAFile} }

// URL is the Sink's URL with path, for a sink Secret's url.
func (s *Sink) URL(path string) string { return s.srv.URL + path }

// Requests returns what the Sink received so far.
func (s *Sink) Requests() []SinkRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SinkRequest(nil), s.requests...)
}

// PrintTo makes the Sink describe every later request to w, as `make demo`
// does in its sink log.
func (s *Sink) PrintTo(w io.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.out = w
}

// FailWith makes the Sink answer every later request with status, still
// recording it, as a receiver that is down or broken would.
func (s *Sink) FailWith(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failWith = status
}

// Heal makes the Sink accept requests again.
func (s *Sink) Heal() { s.FailWith(0) }

// Close stops serving.
func (s *Sink) Close() { s.srv.Close() }

func (s *Sink) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if err != nil {
		http.Error(w, "unreadable body", http.StatusBadRequest)
		return
	}
	r := SinkRequest{Path: req.URL.Path, Header: req.Header.Clone(), Body: body, At: time.Now()}
	if s.Key != nil {
		r.SignatureOK = hmac.Equal([]byte(req.Header.Get("X-Kuvryn-Sync-Signature")), []byte(signature(body, s.Key)))
	}
	s.mu.Lock()
	r.Status = http.StatusNoContent
	if s.failWith != 0 {
		r.Status = s.failWith
	}
	s.requests = append(s.requests, r)
	out := s.out
	s.mu.Unlock()
	if out != nil {
		var pretty bytes.Buffer
		if json.Indent(&pretty, body, "  ", "  ") != nil {
			pretty.Reset()
			pretty.Write(body)
		}
		verified := "not checked"
		if s.Key != nil {
			verified = fmt.Sprint(r.SignatureOK)
		}
		fmt.Fprintf(out, "sink: %s %s event=%s signature-verified=%s\n  %s\n",
			req.Method, req.URL.Path, req.Header.Get("X-Kuvryn-Sync-Event"), verified, pretty.String())
	}
	w.WriteHeader(r.Status)
}

// signature is what a receiver expects in X-Kuvryn-Sync-Signature, computed
// here as any receiver would, independently of the notify-controller.
func signature(body, key []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}
