// Package githost is a fake GitHub or GitLab API on loopback, over TLS, for
// tests of the notify-controller's github and gitlab NotificationSinks. It
// serves the few endpoints previews use (commit statuses, and the comments
// of a pull request or the notes of a merge request), checks every request
// as the real host would (token, path, JSON body, size limits) and records
// it, refused ones included. It is a test kit: no service links it.
//
// A sink Secret's url is Host.URL() (the repository's web address, whose API
// base is <scheme>://<host>/api/v3 for GitHub and /api/v4 for GitLab), its
// token Options.Token; the controller trusts the host with Host.RootCAs or,
// as a process, with --sink-ca-file=Host.WriteCAFile(dir).
package githost

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// Kind is which host the fake plays.
type Kind string

const (
	GitHub Kind = "github"
	GitLab Kind = "gitlab"
)

// The hosts' limits on one comment, in characters.
const (
	GitHubCommentLimit = 65536
	GitLabCommentLimit = 1000000
)

// defaultMaxRequestBytes bounds a request body unless Options say otherwise.
const defaultMaxRequestBytes = 4 << 20

// Options configure a Host. Kind, Token and Repository are required.
type Options struct {
	Kind Kind
	// Token is the only token accepted: GitHub in "Authorization: Bearer
	// <token>", GitLab in "PRIVATE-TOKEN: <token>".
	Token string
	// Repository is "owner/repo" (GitHub) or "group/sub/project" (GitLab).
	Repository string
	// CommentLimit is the most characters a comment may hold; zero is the
	// real host's (GitHubCommentLimit, GitLabCommentLimit).
	CommentLimit int
	// MaxRequestBytes bounds a request body, answered 413 beyond; zero is 4 MiB.
	MaxRequestBytes int
}

// Request is one request the host received.
type Request struct {
	Method string
	// Path is the escaped path, as sent (a GitLab project path keeps its %2F).
	Path   string
	Query  url.Values
	Header http.Header
	Body   []byte
	// Status is what the host answered; Problem says why it refused.
	Status  int
	Problem string
}

// Status is one commit status, as the client sent it. State is the host's
// word: GitHub pending, success, failure, error; GitLab pending, running,
// success, failed, canceled. Context is GitLab's name.
type Status struct {
	Commit      string
	Context     string
	State       string
	Description string
	TargetURL   string
}

// Comment is one pull request comment or merge request note.
type Comment struct {
	ID     int64
	Number int
	Author string
	Body   string
	// Updated counts the edits made to it.
	Updated int
	// System is a GitLab system note (such as "added 1 commit").
	System bool
}

// Author is the user the token belongs to, on every comment made with it.
const Author = "kuvryn-bot"

// Host is a running fake.
type Host struct {
	opts Options
	srv  *httptest.Server

	mu       sync.Mutex
	requests []Request
	statuses []Status
	comments []*Comment
	nextID   int64
	failWith int
	waiting  int
	// held, while not nil, blocks every request until closed.
	held chan struct{}
}

// Start serves a Host until the test ends; it fails the test if the
// options are incomplete.
func Start(t testing.TB, o Options) *Host {
	t.Helper()
	h, err := New(o)
	if err != nil {
		t.Fatalf("starting the fake %s: %v", o.Kind, err)
	}
	t.Cleanup(h.Close)
	return h
}

// New starts serving on a free loopback port over TLS; Close stops it.
func New(o Options) (*Host, error) {
	switch o.Kind {
	case GitHub:
		if strings.Count(o.Repository, "/") != 1 {
			return nil, fmt.Errorf("a GitHub repository is owner/repo, not %q", o.Repository)
		}
		if o.CommentLimit == 0 {
			o.CommentLimit = GitHubCommentLimit
		}
	case GitLab:
		if !strings.Contains(o.Repository, "/") {
			return nil, fmt.Errorf("a GitLab project is group/project, not %q", o.Repository)
		}
		if o.CommentLimit == 0 {
			o.CommentLimit = GitLabCommentLimit
		}
	default:
		return nil, fmt.Errorf("kind %q is neither github nor gitlab", o.Kind)
	}
	if o.Token == "" {
		return nil, errors.New("a token is required")
	}
	if o.MaxRequestBytes == 0 {
		o.MaxRequestBytes = defaultMaxRequestBytes
	}
	h := &Host{opts: o, nextID: 1000}
	h.srv = httptest.NewTLSServer(http.HandlerFunc(h.serve))
	return h, nil
}

// Close answers held requests and stops serving.
func (h *Host) Close() {
	h.Release()
	h.srv.Close()
}

// URL is the repository's web address, what a sink Secret's url holds:
// https://127.0.0.1:<port>/<repository>.
func (h *Host) URL() string { return h.srv.URL + "/" + h.opts.Repository }

// APIBase is where the API is served: <URL's scheme and host>/api/v3 or /api/v4.
func (h *Host) APIBase() string {
	if h.opts.Kind == GitLab {
		return h.srv.URL + "/api/v4"
	}
	return h.srv.URL + "/api/v3"
}

// Kind is which host this is.
func (h *Host) Kind() Kind { return h.opts.Kind }

// Token is the token the host accepts.
func (h *Host) Token() string { return h.opts.Token }

// CommentLimit is the most characters a comment may hold.
func (h *Host) CommentLimit() int { return h.opts.CommentLimit }

// RootCAs trusts the host's self-signed certificate.
func (h *Host) RootCAs() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(h.srv.Certificate())
	return pool
}

// WriteCAFile writes the host's certificate in PEM into dir, for the
// notify-controller's --sink-ca-file, and returns the file's path.
func (h *Host) WriteCAFile(dir string) (string, error) {
	file := filepath.Join(dir, "githost-ca.crt")
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: h.srv.Certificate().Raw})
	return file, os.WriteFile(file, cert, 0o644)
}

// FailWith makes the host answer every later request with status (after
// checking its token), as a host that is down would; zero heals it.
func (h *Host) FailWith(status int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failWith = status
}

// Hold makes every later request wait, unanswered, until Release: a test
// can change the cluster while a delivery is under way.
func (h *Host) Hold() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held == nil {
		h.held = make(chan struct{})
	}
}

// Release answers the requests Hold kept waiting, and those after.
func (h *Host) Release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held != nil {
		close(h.held)
		h.held = nil
	}
}

// Waiting counts the requests Hold keeps waiting now.
func (h *Host) Waiting() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.waiting
}

// Requests is every request received so far, in order.
func (h *Host) Requests() []Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Request(nil), h.requests...)
}

// Refused is every request the host answered with 4xx or 5xx.
func (h *Host) Refused() []Request {
	var out []Request
	for _, r := range h.Requests() {
		if r.Status >= 400 {
			out = append(out, r)
		}
	}
	return out
}

// Statuses are the commit statuses set on commit, oldest first.
func (h *Host) Statuses(commit string) []Status {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []Status
	for _, s := range h.statuses {
		if s.Commit == commit {
			out = append(out, s)
		}
	}
	return out
}

// LatestStatus is the newest status of context on commit, and whether
// there is one.
func (h *Host) LatestStatus(commit, context string) (Status, bool) {
	all := h.Statuses(commit)
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].Context == context {
			return all[i], true
		}
	}
	return Status{}, false
}

// Comments are the comments of pull or merge request number, oldest first.
func (h *Host) Comments(number int) []Comment {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []Comment
	for _, c := range h.comments {
		if c.Number == number {
			out = append(out, *c)
		}
	}
	return out
}

// AddComment adds a comment by someone else to pull or merge request number,
// as people and other bots do, and returns its id.
func (h *Host) AddComment(number int, author, body string) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.add(number, author, body, false).ID
}

// AddSystemNote adds a GitLab system note to merge request number.
func (h *Host) AddSystemNote(number int, body string) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.add(number, "", body, true).ID
}

func (h *Host) add(number int, author, body string, system bool) *Comment {
	h.nextID++
	c := &Comment{ID: h.nextID, Number: number, Author: author, Body: body, System: system}
	h.comments = append(h.comments, c)
	return c
}

// answer is what serve replies: a status and a JSON value.
type answer struct {
	status  int
	body    any
	problem string
	header  map[string]string
}

func refuse(status int, problem string) answer {
	return answer{status: status, body: map[string]string{"message": problem}, problem: problem}
}

func (h *Host) serve(w http.ResponseWriter, req *http.Request) {
	h.mu.Lock()
	held := h.held
	if held != nil {
		h.waiting++
	}
	h.mu.Unlock()
	if held != nil {
		<-held
		h.mu.Lock()
		h.waiting--
		h.mu.Unlock()
	}
	rec := Request{Method: req.Method, Path: req.URL.EscapedPath(), Query: req.URL.Query(), Header: req.Header.Clone()}
	body, err := io.ReadAll(io.LimitReader(req.Body, int64(h.opts.MaxRequestBytes)+1))
	var a answer
	switch {
	case err != nil:
		a = refuse(http.StatusBadRequest, "unreadable body")
	case len(body) > h.opts.MaxRequestBytes:
		a = refuse(http.StatusRequestEntityTooLarge, fmt.Sprintf("body over %d bytes", h.opts.MaxRequestBytes))
	default:
		rec.Body = body
		h.mu.Lock()
		a = h.handle(req, body)
		h.mu.Unlock()
	}
	rec.Status, rec.Problem = a.status, a.problem
	h.mu.Lock()
	h.requests = append(h.requests, rec)
	h.mu.Unlock()
	for k, v := range a.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.status)
	if a.body != nil {
		_ = json.NewEncoder(w).Encode(a.body)
	}
}

// handle checks and serves one request; h.mu is held.
func (h *Host) handle(req *http.Request, body []byte) answer {
	if a, ok := h.authenticate(req); !ok {
		return a
	}
	if h.failWith != 0 {
		return refuse(h.failWith, "failing as told")
	}
	if h.opts.Kind == GitLab {
		return h.gitlab(req, body)
	}
	return h.github(req, body)
}

func (h *Host) authenticate(req *http.Request) (answer, bool) {
	if h.opts.Kind == GitLab {
		if req.Header.Get("Authorization") != "" {
			return refuse(http.StatusUnauthorized, "401 Unauthorized: the token goes in PRIVATE-TOKEN, not Authorization"), false
		}
		if req.Header.Get("PRIVATE-TOKEN") != h.opts.Token {
			return refuse(http.StatusUnauthorized, "401 Unauthorized"), false
		}
		return answer{}, true
	}
	if req.Header.Get("User-Agent") == "" {
		return refuse(http.StatusForbidden, "requests must carry a User-Agent header"), false
	}
	if req.Header.Get("Authorization") != "Bearer "+h.opts.Token {
		return refuse(http.StatusUnauthorized, "Bad credentials"), false
	}
	return answer{}, true
}

var (
	githubStatus      = regexp.MustCompile(`^/api/v3/repos/([^/]+)/([^/]+)/statuses/([^/]+)$`)
	githubComments    = regexp.MustCompile(`^/api/v3/repos/([^/]+)/([^/]+)/issues/([0-9]+)/comments$`)
	githubComment     = regexp.MustCompile(`^/api/v3/repos/([^/]+)/([^/]+)/issues/comments/([0-9]+)$`)
	gitlabStatus      = regexp.MustCompile(`^/api/v4/projects/([^/]+)/statuses/([^/]+)$`)
	gitlabNotes       = regexp.MustCompile(`^/api/v4/projects/([^/]+)/merge_requests/([0-9]+)/notes$`)
	gitlabNote        = regexp.MustCompile(`^/api/v4/projects/([^/]+)/merge_requests/([0-9]+)/notes/([0-9]+)$`)
	commitPattern     = regexp.MustCompile(`^[0-9a-f]{40}$`)
	githubStates      = map[string]bool{"pending": true, "success": true, "failure": true, "error": true}
	gitlabStates      = map[string]bool{"pending": true, "running": true, "success": true, "failed": true, "canceled": true}
	githubDescription = 140
	gitlabDescription = 255
)

func (h *Host) github(req *http.Request, body []byte) answer {
	path := req.URL.EscapedPath()
	repo := func(m []string) bool { return m[1]+"/"+m[2] == h.opts.Repository }
	if m := githubStatus.FindStringSubmatch(path); m != nil && repo(m) {
		if req.Method != http.MethodPost {
			return refuse(http.StatusMethodNotAllowed, "statuses take POST")
		}
		var s struct {
			State       string `json:"state"`
			TargetURL   string `json:"target_url,omitempty"`
			Description string `json:"description,omitempty"`
			Context     string `json:"context,omitempty"`
		}
		if a, ok := decode(req, body, &s, http.StatusUnprocessableEntity); !ok {
			return a
		}
		switch {
		case !commitPattern.MatchString(m[3]):
			return refuse(http.StatusUnprocessableEntity, "sha is not a full commit hash")
		case !githubStates[s.State]:
			return refuse(http.StatusUnprocessableEntity, fmt.Sprintf("state %q is not pending, success, failure or error", s.State))
		case utf8.RuneCountInString(s.Description) > githubDescription:
			return refuse(http.StatusUnprocessableEntity, "description is too long (maximum is 140 characters)")
		}
		if s.Context == "" {
			s.Context = "default"
		}
		h.statuses = append(h.statuses, Status{Commit: m[3], Context: s.Context, State: s.State, Description: s.Description, TargetURL: s.TargetURL})
		return answer{status: http.StatusCreated, body: map[string]any{"state": s.State, "context": s.Context, "description": s.Description}}
	}
	if m := githubComments.FindStringSubmatch(path); m != nil && repo(m) {
		number, _ := strconv.Atoi(m[3])
		switch req.Method {
		case http.MethodGet:
			return h.list(req, number, 30, func(c *Comment) any {
				return map[string]any{"id": c.ID, "body": c.Body, "user": map[string]string{"login": c.Author}}
			})
		case http.MethodPost:
			c, a, ok := h.commentBody(req, body, http.StatusUnprocessableEntity)
			if !ok {
				return a
			}
			n := h.add(number, Author, c, false)
			return answer{status: http.StatusCreated, body: map[string]any{"id": n.ID, "body": n.Body}}
		}
		return refuse(http.StatusMethodNotAllowed, "comments take GET or POST")
	}
	if m := githubComment.FindStringSubmatch(path); m != nil && repo(m) {
		if req.Method != http.MethodPatch {
			return refuse(http.StatusMethodNotAllowed, "a comment takes PATCH")
		}
		id, _ := strconv.ParseInt(m[3], 10, 64)
		return h.update(req, body, id, 0, http.StatusUnprocessableEntity)
	}
	return refuse(http.StatusNotFound, "Not Found")
}

func (h *Host) gitlab(req *http.Request, body []byte) answer {
	path := req.URL.EscapedPath()
	project := func(m []string) bool { return m[1] == url.PathEscape(h.opts.Repository) }
	if m := gitlabStatus.FindStringSubmatch(path); m != nil && project(m) {
		if req.Method != http.MethodPost {
			return refuse(http.StatusMethodNotAllowed, "statuses take POST")
		}
		var s struct {
			State       string `json:"state"`
			Name        string `json:"name,omitempty"`
			Description string `json:"description,omitempty"`
			TargetURL   string `json:"target_url,omitempty"`
			Ref         string `json:"ref,omitempty"`
		}
		if a, ok := decode(req, body, &s, http.StatusBadRequest); !ok {
			return a
		}
		switch {
		case !commitPattern.MatchString(m[2]):
			return refuse(http.StatusNotFound, "404 Commit Not Found")
		case !gitlabStates[s.State]:
			return refuse(http.StatusBadRequest, "state does not have a valid value")
		case utf8.RuneCountInString(s.Description) > gitlabDescription:
			return refuse(http.StatusBadRequest, "description is too long (maximum is 255 characters)")
		}
		if s.Name == "" {
			s.Name = "default"
		}
		// GitLab refuses to move a status that is not finished to the
		// state it is in.
		for i := len(h.statuses) - 1; i >= 0; i-- {
			if p := h.statuses[i]; p.Commit == m[2] && p.Context == s.Name {
				if p.State == s.State && (p.State == "pending" || p.State == "running") {
					return refuse(http.StatusBadRequest, fmt.Sprintf("Cannot transition status via :%s from :%s", verb(s.State), p.State))
				}
				break
			}
		}
		h.statuses = append(h.statuses, Status{Commit: m[2], Context: s.Name, State: s.State, Description: s.Description, TargetURL: s.TargetURL})
		return answer{status: http.StatusCreated, body: map[string]any{"status": s.State, "name": s.Name, "description": s.Description}}
	}
	if m := gitlabNotes.FindStringSubmatch(path); m != nil && project(m) {
		number, _ := strconv.Atoi(m[2])
		switch req.Method {
		case http.MethodGet:
			return h.list(req, number, 20, func(c *Comment) any {
				return map[string]any{"id": c.ID, "body": c.Body, "system": c.System, "author": map[string]string{"username": c.Author}}
			})
		case http.MethodPost:
			c, a, ok := h.commentBody(req, body, http.StatusBadRequest)
			if !ok {
				return a
			}
			n := h.add(number, Author, c, false)
			return answer{status: http.StatusCreated, body: map[string]any{"id": n.ID, "body": n.Body}}
		}
		return refuse(http.StatusMethodNotAllowed, "notes take GET or POST")
	}
	if m := gitlabNote.FindStringSubmatch(path); m != nil && project(m) {
		if req.Method != http.MethodPut {
			return refuse(http.StatusMethodNotAllowed, "a note takes PUT")
		}
		number, _ := strconv.Atoi(m[2])
		id, _ := strconv.ParseInt(m[3], 10, 64)
		return h.update(req, body, id, number, http.StatusBadRequest)
	}
	return refuse(http.StatusNotFound, "404 Not Found")
}

func verb(state string) string {
	switch state {
	case "pending":
		return "enqueue"
	case "running":
		return "run"
	}
	return state
}

// list serves one page of number's comments, per_page (at most 100) from
// page (from 1), with a Link to the next page as the hosts send it.
func (h *Host) list(req *http.Request, number, perPageDefault int, render func(*Comment) any) answer {
	q := req.URL.Query()
	perPage, page := perPageDefault, 1
	if v := q.Get("per_page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return refuse(http.StatusBadRequest, "per_page is not a positive number")
		}
		perPage = min(n, 100)
	}
	if v := q.Get("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return refuse(http.StatusBadRequest, "page is not a positive number")
		}
		page = n
	}
	var all []*Comment
	for _, c := range h.comments {
		if c.Number == number {
			all = append(all, c)
		}
	}
	items := []any{}
	from := (page - 1) * perPage
	for i := from; i < len(all) && i < from+perPage; i++ {
		items = append(items, render(all[i]))
	}
	a := answer{status: http.StatusOK, body: items}
	if from+perPage < len(all) {
		next := *req.URL
		next.Scheme, next.Host = "https", req.Host
		q.Set("page", strconv.Itoa(page+1))
		q.Set("per_page", strconv.Itoa(perPage))
		next.RawQuery = q.Encode()
		a.header = map[string]string{"Link": fmt.Sprintf("<%s>; rel=\"next\"", next.String())}
	}
	return a
}

// commentBody reads {"body": "..."} within the comment limit.
func (h *Host) commentBody(req *http.Request, body []byte, invalid int) (string, answer, bool) {
	var c struct {
		Body string `json:"body"`
	}
	if a, ok := decode(req, body, &c, invalid); !ok {
		return "", a, false
	}
	switch n := utf8.RuneCountInString(c.Body); {
	case n == 0:
		return "", refuse(invalid, "body is missing"), false
	case n > h.opts.CommentLimit:
		return "", refuse(invalid, fmt.Sprintf("body is too long (maximum is %d characters)", h.opts.CommentLimit)), false
	}
	return c.Body, answer{}, true
}

// update edits comment id; a GitLab note must belong to merge request number.
func (h *Host) update(req *http.Request, body []byte, id int64, number int, invalid int) answer {
	text, a, ok := h.commentBody(req, body, invalid)
	if !ok {
		return a
	}
	for _, c := range h.comments {
		if c.ID != id || (number != 0 && c.Number != number) {
			continue
		}
		if c.Author != Author {
			return refuse(http.StatusForbidden, "the token's user may only edit its own comments")
		}
		c.Body = text
		c.Updated++
		return answer{status: http.StatusOK, body: map[string]any{"id": c.ID, "body": c.Body}}
	}
	return refuse(http.StatusNotFound, "Not Found")
}

// decode reads a JSON object with only the fields v has, answering invalid
// when it is not one.
func decode(req *http.Request, body []byte, v any, invalid int) (answer, bool) {
	if ct := req.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return refuse(http.StatusUnsupportedMediaType, fmt.Sprintf("Content-Type %q is not application/json", ct)), false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return refuse(invalid, "Problems parsing JSON: "+err.Error()), false
	}
	if dec.More() {
		return refuse(invalid, "Problems parsing JSON: more than one value"), false
	}
	return answer{}, true
}
