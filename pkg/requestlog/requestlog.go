// Package requestlog records the requests a client sends to the API server,
// one JSON line each, so that a benchmark can replay what a service sent
// rather than a copy of it that drifts. It is a benchmarking aid: the bodies
// of writes are recorded whole, Secrets' desired state included.
package requestlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-logr/logr"
)

// Entry is one recorded request.
type Entry struct {
	Time   time.Time `json:"time"`
	Method string    `json:"method"`
	Path   string    `json:"path"`
	Query  string    `json:"query,omitempty"`
	// User is the Impersonate-User the request carried, if any.
	User        string `json:"user,omitempty"`
	ContentType string `json:"contentType,omitempty"`
	// Accept is the format the client asked the answer in.
	Accept string `json:"accept,omitempty"`
	// Status is the API server's answer; 0 if none came.
	Status int `json:"status"`
	// Body is the body of a write as text; BinaryBody holds it instead when
	// it is not UTF-8 (Protobuf).
	Body       string `json:"body,omitempty"`
	BinaryBody []byte `json:"binaryBody,omitempty"`
}

// Payload is the body of e, whichever field holds it.
func (e Entry) Payload() []byte {
	if len(e.BinaryBody) > 0 {
		return e.BinaryBody
	}
	return []byte(e.Body)
}

// Log appends entries to a file.
type Log struct {
	log logr.Logger

	mu   sync.Mutex
	file *os.File
	// failed is set after the first failed write, which was logged.
	failed bool
}

// Create creates (or truncates) the file at path. Each entry is written
// with its own write, unbuffered, so that a process killed at any point
// leaves every completed request in the file.
func Create(path string, log logr.Logger) (*Log, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	return &Log{log: log, file: f}, nil
}

// Close closes the file.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.file.Close()
}

// Wrap returns rt recording every request but watches into l; use it as a
// rest.Config's WrapTransport, innermost, so that it sees the headers the
// outer round-trippers set, Impersonate-User among them.
func (l *Log) Wrap(rt http.RoundTripper) http.RoundTripper {
	return &recorder{log: l, next: rt}
}

type recorder struct {
	log  *Log
	next http.RoundTripper
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	q := req.URL.Query()
	if w := q.Get("watch"); w == "true" || w == "1" {
		return r.next.RoundTrip(req)
	}
	e := Entry{
		Time:        time.Now(),
		Method:      req.Method,
		Path:        req.URL.Path,
		Query:       req.URL.RawQuery,
		User:        req.Header.Get("Impersonate-User"),
		ContentType: req.Header.Get("Content-Type"),
		Accept:      req.Header.Get("Accept"),
	}
	if isWrite(req.Method) && req.Body != nil && req.Body != http.NoBody {
		body, err := readBody(req)
		if err != nil {
			return nil, err
		}
		if req.GetBody == nil {
			// The body was consumed: send a copy of what was read.
			req = req.Clone(req.Context())
			req.Body = io.NopCloser(bytes.NewReader(body))
		}
		if utf8.Valid(body) {
			e.Body = string(body)
		} else {
			e.BinaryBody = body
		}
	}
	resp, err := r.next.RoundTrip(req)
	if resp != nil {
		e.Status = resp.StatusCode
	}
	r.log.write(e)
	return resp, err
}

// readBody reads req's body without consuming it when the request can give
// it again (client-go's can), else by consuming it.
func readBody(req *http.Request) ([]byte, error) {
	if req.GetBody != nil {
		rc, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		return io.ReadAll(rc)
	}
	defer req.Body.Close()
	return io.ReadAll(req.Body)
}

func isWrite(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

func (l *Log) write(e Entry) {
	line, err := json.Marshal(e)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil {
		_, err = l.file.Write(append(line, '\n'))
	}
	if err != nil && !l.failed {
		// Once: a full disk would otherwise log every request.
		l.failed = true
		l.log.Error(err, "recording API requests failed; the record is incomplete", "file", l.file.Name())
	}
}

// ReadFile reads the entries keep keeps from the file at path, as Read.
func ReadFile(path string, keep func(Entry) bool) ([]Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := Read(f, keep)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return entries, nil
}

// Read parses the lines a Log wrote and returns the entries keep keeps
// (all if keep is nil), so that a reader of a long record holds only what
// it needs. A line that is not an entry is an error naming its number; a
// last line cut short (a process killed while writing it) is too.
func Read(r io.Reader, keep func(Entry) bool) ([]Entry, error) {
	var out []Entry
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var e Entry
			if jerr := json.Unmarshal(line, &e); jerr != nil {
				return out, fmt.Errorf("line %d: %w", n, jerr)
			}
			if e.Method == "" || e.Path == "" {
				return out, fmt.Errorf("line %d: an entry needs a method and a path", n)
			}
			if keep == nil || keep(e) {
				out = append(out, e)
			}
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}
