// Package testgit runs a real Git server on the loopback interface for tests
// and demos. Repositories are served by `git http-backend` over smart HTTP,
// optionally behind HTTP basic auth, and every change the helpers make is a
// real push through that server, so clients under test see exactly what a Git
// host would show them.
//
// The server needs the git executable on PATH. It starts one git process per
// HTTP request, at most Options.MaxConcurrentRequests at a time, and none
// while idle.
package testgit

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/cgi"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// DefaultBranch is the branch CreateRepo points HEAD at and Commit writes to.
const DefaultBranch = "main"

const (
	defaultMaxConcurrentRequests = 4
	// maxBufferedBody bounds the request bodies buffered in memory because
	// the client streamed them chunked, which CGI cannot pass on.
	maxBufferedBody = 64 << 20
	shutdownTimeout = 5 * time.Second
)

// Options configure a Server. The zero value serves anonymous read and write
// access on a random loopback port from a temporary directory.
type Options struct {
	// Addr is the listen address; empty means 127.0.0.1:0 (a random port).
	Addr string
	// Username and Password, when Username is set, require HTTP basic auth on
	// every request, reads included.
	Username string
	Password string
	// Root holds the served repositories. Empty means a temporary directory
	// that Close removes; a given Root is left in place.
	Root string
	// MaxConcurrentRequests caps the git processes serving requests at once;
	// zero means 4.
	MaxConcurrentRequests int
	// ErrorLog receives the stderr of git http-backend; nil discards it.
	ErrorLog io.Writer
}

// Server is a Git smart-HTTP server on a loopback address.
type Server struct {
	opts    Options
	git     string
	root    string
	ownRoot bool
	baseURL string
	addr    string
	handle  http.Handler

	// serving guards http and serveDone, which are nil while stopped.
	serving   sync.Mutex
	http      *http.Server
	serveDone chan struct{}

	mu    sync.Mutex
	repos map[string]*Repo
}

// TB is the part of testing.TB that Start uses, so this package does not
// import testing and stays usable from commands.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// Start starts a Server and closes it when the test ends; it fails the test
// if the server cannot start.
func Start(t TB, opts Options) *Server {
	t.Helper()
	s, err := NewServer(opts)
	if err != nil {
		t.Fatalf("starting Git test server: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Fatalf("closing Git test server: %v", err)
		}
	})
	return s
}

// NewServer starts serving. Call Close to stop it.
func NewServer(opts Options) (*Server, error) {
	gitPath, err := exec.LookPath("git")
	if err != nil {
		return nil, fmt.Errorf("testgit needs the git executable on PATH: %w", err)
	}
	if opts.MaxConcurrentRequests <= 0 {
		opts.MaxConcurrentRequests = defaultMaxConcurrentRequests
	}
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if opts.ErrorLog == nil {
		opts.ErrorLog = io.Discard
	}

	s := &Server{opts: opts, git: gitPath, root: opts.Root, repos: map[string]*Repo{}}
	if s.root == "" {
		if s.root, err = os.MkdirTemp("", "testgit-"); err != nil {
			return nil, fmt.Errorf("creating Git test server root: %w", err)
		}
		s.ownRoot = true
	}
	for _, dir := range []string{s.servedDir(), s.clientsDir(), s.homeDir()} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			s.removeRoot()
			return nil, fmt.Errorf("creating Git test server directory %s: %w", dir, err)
		}
	}

	s.handle = s.handler()
	if err := s.listen(opts.Addr); err != nil {
		s.removeRoot()
		return nil, err
	}
	s.baseURL = "http://" + s.addr
	return s, nil
}

// listen serves on addr and records the address it got.
func (s *Server) listen(addr string) error {
	listener, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	s.addr = listener.Addr().String()
	srv := &http.Server{
		Handler:           s.handle,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(s.opts.ErrorLog, "testgit: ", 0),
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(listener)
	}()
	s.http, s.serveDone = srv, done
	return nil
}

// Stop closes the listener and every open connection, as a Git host that
// went down would: clients get "connection refused" until Start. The
// repositories are kept.
func (s *Server) Stop() error {
	s.serving.Lock()
	defer s.serving.Unlock()
	return s.stop(false)
}

// Start serves again on the address Stop closed.
func (s *Server) Start() error {
	s.serving.Lock()
	defer s.serving.Unlock()
	if s.http != nil {
		return errors.New("the Git server is running")
	}
	return s.listen(s.addr)
}

// stop ends serving; graceful waits briefly for requests in flight.
func (s *Server) stop(graceful bool) error {
	if s.http == nil {
		return nil
	}
	var err error
	if graceful {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		err = s.http.Shutdown(ctx)
	}
	if !graceful || err != nil {
		err = errors.Join(err, s.http.Close())
	}
	<-s.serveDone
	s.http, s.serveDone = nil, nil
	return err
}

// URL is the clone URL of the named repository, without credentials.
func (s *Server) URL(repo string) string {
	return s.baseURL + "/" + repo + ".git"
}

// BaseURL is the server's address, such as http://127.0.0.1:38811.
func (s *Server) BaseURL() string { return s.baseURL }

// Close stops the server, waiting briefly for requests in flight, and
// removes the repositories unless Options.Root was given.
func (s *Server) Close() error {
	s.serving.Lock()
	err := s.stop(true)
	s.serving.Unlock()
	if rmErr := s.removeRoot(); rmErr != nil {
		err = errors.Join(err, rmErr)
	}
	return err
}

func (s *Server) removeRoot() error {
	if !s.ownRoot {
		return nil
	}
	return os.RemoveAll(s.root)
}

func (s *Server) servedDir() string  { return filepath.Join(s.root, "repos") }
func (s *Server) clientsDir() string { return filepath.Join(s.root, "clients") }
func (s *Server) homeDir() string    { return filepath.Join(s.root, "home") }

// repoNamePattern keeps names usable as URL paths and directory names.
var repoNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)*$`)

// CreateRepo creates an empty bare repository whose HEAD is main and which
// accepts pushes. Names may contain slashes (team/app) and are served
// without a .git suffix in the name, at URL(name).
func (s *Server) CreateRepo(name string) (*Repo, error) {
	if !repoNamePattern.MatchString(name) || strings.HasSuffix(name, ".git") || strings.Contains(name, "..") {
		return nil, fmt.Errorf("repository name %q is invalid: use letters, digits, '.', '_', '-' and '/', without a .git suffix", name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.repos[name]; ok {
		return nil, fmt.Errorf("repository %q already exists", name)
	}

	r := &Repo{
		srv:       s,
		name:      name,
		servedDir: filepath.Join(s.servedDir(), filepath.FromSlash(name)+".git"),
		clientDir: filepath.Join(s.clientsDir(), filepath.FromSlash(name)+".git"),
	}
	if err := os.MkdirAll(filepath.Dir(r.servedDir), 0o755); err != nil {
		return nil, fmt.Errorf("creating repository %q: %w", name, err)
	}
	steps := [][]string{
		{"init", "--quiet", "--bare", "--initial-branch=" + DefaultBranch, r.servedDir},
		{"-C", r.servedDir, "config", "http.receivepack", "true"},
		{"init", "--quiet", "--bare", r.clientDir},
	}
	for _, args := range steps {
		if _, err := s.runGit(nil, args...); err != nil {
			return nil, fmt.Errorf("creating repository %q: %w", name, err)
		}
	}
	s.repos[name] = r
	return r, nil
}

// handler authenticates, bounds concurrency and hands requests to
// git http-backend.
func (s *Server) handler() http.Handler {
	backend := &cgi.Handler{
		Path: s.git,
		Args: []string{"http-backend"},
		Dir:  s.root,
		Env: append(s.gitEnv(),
			"GIT_PROJECT_ROOT="+s.servedDir(),
			"GIT_HTTP_EXPORT_ALL=1",
		),
		Stderr: s.opts.ErrorLog,
		Logger: log.New(s.opts.ErrorLog, "testgit: ", 0),
	}
	slots := make(chan struct{}, s.opts.MaxConcurrentRequests)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if s.opts.Username != "" && !s.authorized(req) {
			w.Header().Set("WWW-Authenticate", `Basic realm="testgit"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if err := unchunk(req); err != nil {
			http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
			return
		}
		select {
		case slots <- struct{}{}:
		case <-req.Context().Done():
			return
		}
		defer func() { <-slots }()
		backend.ServeHTTP(w, req)
	})
}

func (s *Server) authorized(req *http.Request) bool {
	user, pass, ok := req.BasicAuth()
	if !ok {
		return false
	}
	userOK := subtle.ConstantTimeCompare([]byte(user), []byte(s.opts.Username)) == 1
	passOK := subtle.ConstantTimeCompare([]byte(pass), []byte(s.opts.Password)) == 1
	return userOK && passOK
}

// unchunk buffers a body of unknown length, because net/http/cgi refuses
// chunked bodies and git sends large pushes chunked.
func unchunk(req *http.Request) error {
	if req.ContentLength >= 0 || req.Body == nil {
		return nil
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, maxBufferedBody+1))
	if err != nil {
		return fmt.Errorf("reading request body: %w", err)
	}
	if len(body) > maxBufferedBody {
		return fmt.Errorf("request body exceeds %d bytes", maxBufferedBody)
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	req.TransferEncoding = nil
	return nil
}

// gitEnv isolates git from the user's configuration, credentials and
// proxies, so tests behave the same on every machine.
func (s *Server) gitEnv() []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + s.homeDir(),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + os.DevNull,
		"GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=Testgit",
		"GIT_AUTHOR_EMAIL=testgit@example.com",
		"GIT_COMMITTER_NAME=Testgit",
		"GIT_COMMITTER_EMAIL=testgit@example.com",
		"LC_ALL=C",
	}
}

// runGit runs git with the isolated environment, feeding stdin, and returns
// its trimmed stdout. Errors carry stderr but never the command line, which
// may hold the push URL with the server's credentials.
func (s *Server) runGit(stdin []byte, args ...string) (string, error) {
	cmd := exec.Command(s.git, args...)
	cmd.Env = s.gitEnv()
	cmd.Dir = s.root
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", gitSubcommand(args), err, s.redact(strings.TrimSpace(stderr.String())))
	}
	return strings.TrimSpace(stdout.String()), nil
}

func (s *Server) redact(text string) string {
	if s.opts.Password == "" {
		return text
	}
	escaped := strings.TrimPrefix(url.UserPassword("", s.opts.Password).String(), ":")
	return strings.NewReplacer(s.opts.Password, "REDACTED", escaped, "REDACTED").Replace(text)
}

func gitSubcommand(args []string) string {
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "-C":
			i++
		case !strings.HasPrefix(args[i], "-"):
			return args[i]
		}
	}
	return ""
}
