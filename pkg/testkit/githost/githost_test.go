package githost

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

const (
	token  = "t0ken-s3cret"
	commit = "0123456789abcdef0123456789abcdef01234567"
)

func client(h *Host) *http.Client {
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: h.RootCAs()}}}
}

// call sends one request the way the notify-controller does, with auth
// unless header is set, and returns the status and body.
func call(t *testing.T, h *Host, method, path, body string, header map[string]string) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, h.APIBase()+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", "test")
	req.Header.Set("Content-Type", "application/json")
	if h.Kind() == GitLab {
		req.Header.Set("PRIVATE-TOKEN", token)
	} else {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		if v == "" && k != "User-Agent" { // an empty User-Agent sends none
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := client(h).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// TestHost_RefusesMalformedRequests: a wrong or misplaced token, an unknown
// path, another repository, bad JSON, an unknown field, a bad state, a
// comment over the host's limit and a body over the request limit are
// refused as the hosts refuse them, recorded with the reason, and change
// nothing.
func TestHost_RefusesMalformedRequests(t *testing.T) {
	gh := Start(t, Options{Kind: GitHub, Token: token, Repository: "org/repo", CommentLimit: 10, MaxRequestBytes: 1000})
	gl := Start(t, Options{Kind: GitLab, Token: token, Repository: "group/sub/project", CommentLimit: 10, MaxRequestBytes: 1000})
	project := "/projects/group%2Fsub%2Fproject"
	for _, tc := range []struct {
		name         string
		host         *Host
		method, path string
		body         string
		header       map[string]string
		want         int
	}{
		{"github wrong token", gh, "POST", "/repos/org/repo/statuses/" + commit, `{"state":"pending"}`, map[string]string{"Authorization": "Bearer nope"}, 401},
		{"github token scheme", gh, "POST", "/repos/org/repo/statuses/" + commit, `{"state":"pending"}`, map[string]string{"Authorization": "token " + token}, 401},
		{"github no user agent", gh, "POST", "/repos/org/repo/statuses/" + commit, `{"state":"pending"}`, map[string]string{"User-Agent": ""}, 403},
		{"github unknown path", gh, "GET", "/repos/org/repo/pulls", "", nil, 404},
		{"github other repository", gh, "POST", "/repos/org/other/statuses/" + commit, `{"state":"pending"}`, nil, 404},
		{"github bad JSON", gh, "POST", "/repos/org/repo/statuses/" + commit, `{"state":`, nil, 422},
		{"github unknown field", gh, "POST", "/repos/org/repo/statuses/" + commit, `{"state":"pending","colour":"red"}`, nil, 422},
		{"github bad state", gh, "POST", "/repos/org/repo/statuses/" + commit, `{"state":"failed"}`, nil, 422},
		{"github short sha", gh, "POST", "/repos/org/repo/statuses/abc", `{"state":"pending"}`, nil, 422},
		{"github not JSON", gh, "POST", "/repos/org/repo/statuses/" + commit, `{"state":"pending"}`, map[string]string{"Content-Type": "text/plain"}, 415},
		{"github comment too long", gh, "POST", "/repos/org/repo/issues/1/comments", `{"body":"12345678901"}`, nil, 422},
		{"github empty comment", gh, "POST", "/repos/org/repo/issues/1/comments", `{"body":""}`, nil, 422},
		{"github body over limit", gh, "POST", "/repos/org/repo/issues/1/comments", `{"body":"` + strings.Repeat("x", 1000) + `"}`, nil, 413},
		{"github edit missing comment", gh, "PATCH", "/repos/org/repo/issues/comments/1", `{"body":"x"}`, nil, 404},
		{"gitlab wrong token", gl, "POST", project + "/statuses/" + commit, `{"state":"pending"}`, map[string]string{"PRIVATE-TOKEN": "nope"}, 401},
		{"gitlab bearer token", gl, "POST", project + "/statuses/" + commit, `{"state":"pending"}`, map[string]string{"PRIVATE-TOKEN": "", "Authorization": "Bearer " + token}, 401},
		{"gitlab unescaped project", gl, "POST", "/projects/group/sub/project/statuses/" + commit, `{"state":"pending"}`, nil, 404},
		{"gitlab bad state", gl, "POST", project + "/statuses/" + commit, `{"state":"failure"}`, nil, 400},
		{"gitlab bad JSON", gl, "POST", project + "/merge_requests/1/notes", `not json`, nil, 400},
		{"gitlab note too long", gl, "POST", project + "/merge_requests/1/notes", `{"body":"12345678901"}`, nil, 400},
		{"gitlab edit with POST", gl, "POST", project + "/merge_requests/1/notes/5", `{"body":"x"}`, nil, 405},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(tc.host.Refused())
			got, body := call(t, tc.host, tc.method, tc.path, tc.body, tc.header)
			if got != tc.want {
				t.Fatalf("answered %d %s, want %d", got, body, tc.want)
			}
			refused := tc.host.Refused()
			if len(refused) != before+1 || refused[len(refused)-1].Problem == "" {
				t.Errorf("refusal not recorded with a reason: %+v", refused)
			}
		})
	}
	if s := gh.Statuses(commit); len(s) != 0 {
		t.Errorf("refused requests set statuses: %+v", s)
	}
	if c := gh.Comments(1); len(c) != 0 {
		t.Errorf("refused requests commented: %+v", c)
	}
	if c := gl.Comments(1); len(c) != 0 {
		t.Errorf("refused requests made notes: %+v", c)
	}
}

// TestHost_RecordsStatusesAndComments: statuses are kept per commit and
// context, comments per pull or merge request, listed in pages with a next
// Link, edited in place only by their author; GitLab refuses a pending
// status that is pending already.
func TestHost_RecordsStatusesAndComments(t *testing.T) {
	for _, tc := range []struct {
		kind                       Kind
		repo, status, comments, ed string
		editMethod                 string
		failed                     string
	}{
		{GitHub, "org/repo", "/repos/org/repo/statuses/", "/repos/org/repo/issues/7/comments", "/repos/org/repo/issues/comments/{id}", "PATCH", "failure"},
		{GitLab, "group/project", "/projects/group%2Fproject/statuses/", "/projects/group%2Fproject/merge_requests/7/notes", "/projects/group%2Fproject/merge_requests/7/notes/{id}", "PUT", "failed"},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			h := Start(t, Options{Kind: tc.kind, Token: token, Repository: tc.repo})
			ctxField := "context"
			if tc.kind == GitLab {
				ctxField = "name"
			}
			for _, state := range []string{"pending", "success", tc.failed} {
				if code, body := call(t, h, "POST", tc.status+commit, fmt.Sprintf(`{"state":%q,%q:"kuvryn-sync/api","description":"d"}`, state, ctxField), nil); code != 201 {
					t.Fatalf("status %s: %d %s", state, code, body)
				}
			}
			if got := h.Statuses(commit); len(got) != 3 || got[2].State != tc.failed || got[2].Context != "kuvryn-sync/api" {
				t.Errorf("statuses %+v", got)
			}
			if latest, ok := h.LatestStatus(commit, "kuvryn-sync/api"); !ok || latest.State != tc.failed {
				t.Errorf("latest status %+v", latest)
			}
			call(t, h, "POST", tc.status+commit, fmt.Sprintf(`{"state":"pending",%q:"other"}`, ctxField), nil)
			code, _ := call(t, h, "POST", tc.status+commit, fmt.Sprintf(`{"state":"pending",%q:"other"}`, ctxField), nil)
			if want := map[Kind]int{GitHub: 201, GitLab: 400}[tc.kind]; code != want {
				t.Errorf("a second pending status answered %d, want %d", code, want)
			}

			foreign := h.AddComment(7, "someone", "LGTM")
			for i := range 3 {
				if code, body := call(t, h, "POST", tc.comments, fmt.Sprintf(`{"body":"c%d"}`, i), nil); code != 201 {
					t.Fatalf("comment: %d %s", code, body)
				}
			}
			h.AddComment(8, "someone", "elsewhere")
			code, body := call(t, h, "GET", tc.comments+"?per_page=2&page=1", "", nil)
			var page []struct {
				ID   int64  `json:"id"`
				Body string `json:"body"`
			}
			if err := json.Unmarshal(body, &page); code != 200 || err != nil || len(page) != 2 || page[0].Body != "LGTM" {
				t.Fatalf("page 1: %d %s %v", code, body, err)
			}
			if link := h.Requests()[len(h.Requests())-1]; link.Status != 200 {
				t.Errorf("list recorded as %d", link.Status)
			}
			_, body = call(t, h, "GET", tc.comments+"?per_page=2&page=2", "", nil)
			if err := json.Unmarshal(body, &page); err != nil || len(page) != 2 || page[1].Body != "c2" {
				t.Fatalf("page 2: %s %v", body, err)
			}
			if code, _ := call(t, h, tc.editMethod, strings.Replace(tc.ed, "{id}", fmt.Sprint(page[1].ID), 1), `{"body":"edited"}`, nil); code != 200 {
				t.Errorf("edit answered %d", code)
			}
			if code, _ := call(t, h, tc.editMethod, strings.Replace(tc.ed, "{id}", fmt.Sprint(foreign), 1), `{"body":"taken"}`, nil); code != 403 {
				t.Errorf("editing someone else's comment answered %d, want 403", code)
			}
			got := h.Comments(7)
			if len(got) != 4 || got[3].Body != "edited" || got[3].Updated != 1 || got[0].Body != "LGTM" || got[3].Author != Author {
				t.Errorf("comments %+v", got)
			}
			if !bytes.Contains(h.Requests()[0].Body, []byte("pending")) {
				t.Errorf("first request's body not recorded: %+v", h.Requests()[0])
			}
		})
	}
}

// TestHost_HoldKeepsRequestsWaiting: a held request is neither answered
// nor recorded until Release.
func TestHost_HoldKeepsRequestsWaiting(t *testing.T) {
	h := Start(t, Options{Kind: GitHub, Token: token, Repository: "org/repo"})
	h.Hold()
	done := make(chan int)
	go func() {
		code, _ := call(t, h, "POST", "/repos/org/repo/statuses/"+commit, `{"state":"pending"}`, nil)
		done <- code
	}()
	for h.Waiting() == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(h.Requests()); n != 0 {
		t.Fatalf("%d requests recorded while held", n)
	}
	h.Release()
	if code := <-done; code != 201 || len(h.Statuses(commit)) != 1 || h.Waiting() != 0 {
		t.Errorf("released request answered %d, statuses %+v", code, h.Statuses(commit))
	}
}
