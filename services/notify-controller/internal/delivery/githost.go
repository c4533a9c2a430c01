package delivery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/notify-controller/internal/destination"
	"github.com/kuvryn/kuvryn-sync/services/notify-controller/internal/payload"
)

// CommentLimit is the most characters a host takes in one comment.
func CommentLimit(t syncv1.SinkType) int {
	if t == syncv1.SinkGitLab {
		return 1000000
	}
	return 65536
}

const (
	// perPage is the largest page both hosts serve.
	perPage = 100
	// maxCommentPages bounds the search for an Application's comment: past
	// 2000 comments a pull request gets a new one.
	maxCommentPages = 20
	// maxPageBytes bounds one page of comments read (100 GitLab notes of up
	// to a million characters each would be far more).
	maxPageBytes = 32 << 20
	// maxErrorBytes bounds the body read from an answer that is not 2xx.
	maxErrorBytes = 4 << 10
)

// gitHost calls the GitHub or GitLab API of one sink.
type gitHost struct {
	http *http.Client
	dest *destination.Destination
	// current reports whether the preview Revision still exists. One
	// deleted meanwhile was replaced by a newer commit's, whose comment
	// this one must not overwrite.
	current func(context.Context) (bool, error)
}

// preview sets p's commit status and, for a pull or merge request once the
// plan is done, writes its comment.
func (g gitHost) preview(ctx context.Context, p *payload.Preview) error {
	if err := g.setStatus(ctx, p); err != nil {
		return fmt.Errorf("setting the commit status: %w", err)
	}
	if p.Number == 0 || p.State == payload.PreviewPending {
		return nil
	}
	if ok, err := g.current(ctx); err != nil || !ok {
		return err
	}
	body := payload.PreviewComment(p, CommentLimit(g.dest.Repository.Provider))
	id, err := g.findComment(ctx, p.Number, payload.PreviewMarker(p.Application))
	if err != nil {
		return fmt.Errorf("listing the comments of %s: %w", p.Name, err)
	}
	if err := g.writeComment(ctx, p.Number, id, body); err != nil {
		return fmt.Errorf("writing the comment on %s: %w", p.Name, err)
	}
	return nil
}

func (g gitHost) gitlab() bool { return g.dest.Repository.Provider == syncv1.SinkGitLab }

// endpoint is the API URL of path under the repository or project.
func (g gitHost) endpoint(path string) string {
	r := g.dest.Repository
	if g.gitlab() {
		return r.API.String() + "/projects/" + url.PathEscape(r.Path) + path
	}
	return r.API.String() + "/repos/" + r.Path + path
}

func (g gitHost) setStatus(ctx context.Context, p *payload.Preview) error {
	state := string(p.State)
	body := map[string]string{"state": state, "description": payload.PreviewDescription(p)}
	if g.gitlab() {
		if p.State == payload.PreviewFailure {
			body["state"] = "failed"
		}
		body["name"] = payload.PreviewContext(p.Application)
	} else {
		body["context"] = payload.PreviewContext(p.Application)
	}
	_, err := g.do(ctx, http.MethodPost, g.endpoint("/statuses/"+url.PathEscape(p.Commit)), body, 0)
	var se *statusError
	// GitLab refuses to set a status that is not finished to the state it
	// is in: a repeat after a restart, already done.
	if errors.As(err, &se) && se.code == http.StatusBadRequest && g.gitlab() && strings.Contains(se.detail, "Cannot transition status") {
		return nil
	}
	return err
}

// findComment is the id of the first comment of pull or merge request
// number that starts with marker, or zero.
func (g gitHost) findComment(ctx context.Context, number int, marker string) (int64, error) {
	path := "/issues/" + strconv.Itoa(number) + "/comments"
	if g.gitlab() {
		path = "/merge_requests/" + strconv.Itoa(number) + "/notes"
	}
	for page := 1; page <= maxCommentPages; page++ {
		q := url.Values{"per_page": {strconv.Itoa(perPage)}, "page": {strconv.Itoa(page)}}
		if g.gitlab() {
			q.Set("sort", "asc")
			q.Set("order_by", "created_at")
		}
		data, err := g.do(ctx, http.MethodGet, g.endpoint(path)+"?"+q.Encode(), nil, maxPageBytes)
		if err != nil {
			return 0, err
		}
		id, n, err := FindComment(data, marker)
		if err != nil || id != 0 || n < perPage {
			return id, err
		}
	}
	return 0, nil
}

// listedComment is what a comment list tells of each comment: GitHub's
// issue comments and GitLab's notes both have id and body; GitLab's
// system notes are the host's own.
type listedComment struct {
	ID     int64  `json:"id"`
	Body   string `json:"body"`
	System bool   `json:"system"`
}

// FindComment reads one page of a comment list and returns the id of the
// first comment, not a system note, whose body starts with marker (zero if
// none) and how many comments the page held.
func FindComment(page []byte, marker string) (int64, int, error) {
	var list []listedComment
	if err := json.Unmarshal(page, &list); err != nil {
		return 0, 0, errors.New("the host answered with a comment list that is not a JSON array of comments")
	}
	for _, c := range list {
		if !c.System && c.ID > 0 && strings.HasPrefix(c.Body, marker) {
			return c.ID, len(list), nil
		}
	}
	return 0, len(list), nil
}

// writeComment updates comment id in place, or adds one when id is zero.
func (g gitHost) writeComment(ctx context.Context, number int, id int64, body string) error {
	payload := map[string]string{"body": body}
	switch {
	case id == 0 && g.gitlab():
		_, err := g.do(ctx, http.MethodPost, g.endpoint(fmt.Sprintf("/merge_requests/%d/notes", number)), payload, 0)
		return err
	case id == 0:
		_, err := g.do(ctx, http.MethodPost, g.endpoint(fmt.Sprintf("/issues/%d/comments", number)), payload, 0)
		return err
	case g.gitlab():
		_, err := g.do(ctx, http.MethodPut, g.endpoint(fmt.Sprintf("/merge_requests/%d/notes/%d", number, id)), payload, 0)
		return err
	}
	_, err := g.do(ctx, http.MethodPatch, g.endpoint(fmt.Sprintf("/issues/comments/%d", id)), payload, 0)
	return err
}

// do sends one request with the token and returns the answer's body, at
// most limit bytes of it (none when limit is zero).
func (g gitHost) do(ctx context.Context, method, target string, body any, limit int64) ([]byte, error) {
	var r io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return nil, permanent{err}
		}
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, r)
	if err != nil {
		return nil, permanent{errors.New("the sink's API URL cannot be requested")}
	}
	req.Header.Set("User-Agent", "kuvryn-sync-notify-controller")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if g.gitlab() {
		req.Header.Set("PRIVATE-TOKEN", g.dest.Token)
	} else {
		req.Header.Set("Authorization", "Bearer "+g.dest.Token)
		req.Header.Set("Accept", "application/vnd.github+json")
	}
	resp, err := g.http.Do(req)
	if err != nil {
		return nil, errors.New(scrub(describe(err), g.dest.URL))
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		detail, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBytes))
		se := &statusError{code: resp.StatusCode, detail: string(detail)}
		if resp.StatusCode == http.StatusUnauthorized {
			return nil, permanent{se}
		}
		return nil, se
	}
	if limit == 0 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil, nil
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	switch {
	case err != nil:
		return nil, errors.New(scrub(describe(err), g.dest.URL))
	case int64(len(data)) > limit:
		return nil, fmt.Errorf("the host's answer is larger than %d bytes", limit)
	}
	return data, nil
}
