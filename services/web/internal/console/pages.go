package console

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

const (
	// defaultPageSize rows per list page; ?limit= picks up to maxPageSize.
	defaultPageSize = 50
	maxPageSize     = 1000
)

func parseTemplates() (*template.Template, error) {
	return template.New("").Funcs(template.FuncMap{
		"link":  safeLink,
		"ago":   ago,
		"short": shortDigest,
		"shard": shardOf,
		"time": func(t *metav1.Time) string {
			if t == nil || t.IsZero() {
				return ""
			}
			return t.UTC().Format(time.RFC3339)
		},
	}).ParseFS(templateFS, "templates/*.html")
}

// safeLink is the URL when s is an absolute http or https URL, else "":
// only those become links, so a javascript: or data: value renders as text.
func safeLink(s string) string {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	return u.String()
}

// shardOf names an object's shard (the sync.kuvryn.io/shard label); the
// default shard, without the label, is "default".
func shardOf(labels map[string]string) string {
	if shard, ok := labels[syncv1.ShardLabel]; ok {
		return shard
	}
	return "default"
}

func ago(t metav1.Time) string {
	if t.IsZero() {
		return ""
	}
	return duration.HumanDuration(time.Since(t.Time))
}

// Frame is what every signed-in page shows around its content.
type Frame struct {
	User string
	CSRF string
	Nav  string
}

type messagePage struct {
	Frame
	Title   string
	Message string
}

func (c *Console) pageFrame(r *http.Request, nav string) Frame {
	s := sessionFrom(r.Context())
	return Frame{User: s.User, CSRF: s.CSRF, Nav: nav}
}

// readFailed answers a failed read: a refusal page when RBAC forbids it,
// back to sign-in when the token no longer works, an error page otherwise.
func (c *Console) readFailed(w http.ResponseWriter, r *http.Request, what string, err error) {
	f := c.pageFrame(r, "")
	switch {
	case apierrors.IsForbidden(err):
		c.render(w, http.StatusForbidden, "refused.html", messagePage{Frame: f, Title: "Not allowed",
			Message: fmt.Sprintf("Kubernetes refuses to let %s read %s: %s", f.User, what, err.Error())})
	case apierrors.IsUnauthorized(err):
		c.clearCookie(w, sessionCookie)
		http.Redirect(w, r, "/sign-in?expired=1", http.StatusSeeOther)
	case apierrors.IsNotFound(err):
		c.render(w, http.StatusNotFound, "message.html", messagePage{Frame: f, Title: "Not found",
			Message: fmt.Sprintf("There is no %s.", what)})
	default:
		c.log.Error(err, "reading for the console", "what", what)
		c.render(w, http.StatusBadGateway, "message.html", messagePage{Frame: f, Title: "The API server did not answer",
			Message: fmt.Sprintf("Reading %s failed; try again shortly.", what)})
	}
}

// listFailed answers a failed List of the page at path; sent is the
// continue token that List sent. An expired token (410) starts the list
// again, as client-go's pager falls back to a full list: the console
// issued the token and the list moved on, nobody's mistake. A token the
// API server refuses as malformed (400) is the person's ?continue=,
// answered 400; the console does not look inside tokens itself, as they
// are the API server's opaque format. Anything else is readFailed.
func (c *Console) listFailed(w http.ResponseWriter, r *http.Request, q listQuery, path, what, sent string, err error) {
	switch {
	case apierrors.IsResourceExpired(err):
		http.Redirect(w, r, q.url(path, ""), http.StatusSeeOther)
	case apierrors.IsBadRequest(err) && sent != "" && sent == q.Continue:
		c.badRequest(w, r, strings.TrimPrefix(path, "/"), fmt.Errorf("continue %s is not a paging token the API server accepts (%s); start again from the first page",
			quoted(q.Continue), clipped(err.Error(), 2*echoRunes)))
	default:
		c.readFailed(w, r, what, err)
	}
}

// listQuery is a list page's filters and position.
type listQuery struct {
	Namespace string
	// State filters Applications by sync state, health or phase.
	State string
	// Application filters Revisions by the Application they belong to.
	Application string
	Continue    string
	Limit       int
}

// parseListQuery reads a list page's query; filters names the filters
// beyond namespace the page takes ("state", "application"), any other is
// refused rather than silently ignored.
func parseListQuery(r *http.Request, what string, filters ...string) (listQuery, error) {
	q := r.URL.Query()
	lq := listQuery{Namespace: q.Get("namespace"), State: q.Get("state"), Application: q.Get("application"),
		Continue: q.Get("continue"), Limit: defaultPageSize}
	for k, v := range map[string]string{"state": lq.State, "application": lq.Application} {
		if v != "" && !slices.Contains(filters, k) {
			return lq, fmt.Errorf("%s have no %s filter", what, k)
		}
	}
	if lq.Namespace != "" {
		if p := namespaceProblem(lq.Namespace); p != "" {
			return lq, fmt.Errorf("namespace %s is not a namespace name: %s", quoted(lq.Namespace), p)
		}
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxPageSize {
			return lq, fmt.Errorf("limit %s is not a number from 1 to %d", quoted(s), maxPageSize)
		}
		lq.Limit = n
	}
	return lq, nil
}

// listOptions reads one page of limit objects at token, in the query's
// namespace (all when empty), plus extra options.
func (q listQuery) listOptions(token string, extra ...client.ListOption) []client.ListOption {
	opts := append([]client.ListOption{client.Limit(int64(q.Limit)), client.Continue(token)}, extra...)
	if q.Namespace != "" {
		opts = append(opts, client.InNamespace(q.Namespace))
	}
	return opts
}

// next is the URL of the page after this one, or "" on the last page.
func (q listQuery) next(path, token string) string {
	if token == "" {
		return ""
	}
	return q.url(path, token)
}

// url is path with the query's filters and limit, at token.
func (q listQuery) url(path, token string) string {
	v := url.Values{}
	for k, s := range map[string]string{"namespace": q.Namespace, "state": q.State, "application": q.Application, "continue": token} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if q.Limit != defaultPageSize {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if len(v) == 0 {
		return path
	}
	return path + "?" + v.Encode()
}

type applicationsPage struct {
	Frame
	Query listQuery
	Items []syncv1.Application
	Next  string
	// Events is the page's live-update stream, from the resource version
	// of its first read (live.go).
	Events string
}

// matches: the state filter names a sync state, a health state or a phase.
func matches(a *syncv1.Application, state string) bool {
	return state == "" || string(a.Status.Sync) == state || string(a.Status.Health) == state || string(a.Status.Phase) == state
}

// applications lists one page of Applications straight from the API server
// (List with Limit and Continue), never the whole list. With a state
// filter it reads chunks of the page size until the page is full; a page
// then ends on a chunk boundary, so it may hold up to twice the page size
// and the next page starts where the last chunk read ended.
func (c *Console) applications(w http.ResponseWriter, r *http.Request) {
	q, err := parseListQuery(r, "Applications", "state")
	if err != nil {
		c.badRequest(w, r, "applications", err)
		return
	}
	page := applicationsPage{Frame: c.pageFrame(r, "applications"), Query: q}
	cont := q.Continue
	for {
		var list syncv1.ApplicationList
		if err := c.users.List(r.Context(), &list, q.listOptions(cont)...); err != nil {
			c.listFailed(w, r, q, "/applications", "Applications"+inNamespace(q.Namespace), cont, err)
			return
		}
		if page.Events == "" {
			page.Events = eventsURL("/applications/events", q.url("", ""), list.ResourceVersion)
		}
		for i := range list.Items {
			if matches(&list.Items[i], q.State) {
				page.Items = append(page.Items, list.Items[i])
			}
		}
		cont = list.Continue
		if cont == "" || len(page.Items) >= q.Limit {
			break
		}
	}
	page.Next = q.next("/applications", cont)
	c.render(w, http.StatusOK, "applications.html", page)
}

// eventsURL is a page's live-update stream: path, the page's query (from
// listQuery.url, "" or "?..."), and the resource version it was read at.
func eventsURL(path, query, rv string) string {
	sep := "?"
	if query != "" {
		sep = "&"
	}
	return path + query + sep + "rv=" + url.QueryEscape(rv)
}

func inNamespace(ns string) string {
	if ns == "" {
		return " in all namespaces"
	}
	return " in namespace " + ns
}

type applicationPage struct {
	Frame
	App     *syncv1.Application
	Desired *syncv1.Revision
	// RevisionError says why the desired Revision could not be read.
	RevisionError string
	Annotations   []keyValue
	Approve       string
	Previews      previewsView
	Events        string
}

type keyValue struct{ Key, Value string }

// application shows one Application and its desired Revision: plan,
// approval, hooks, waves, diagnosis, and the Application's history.
func (c *Console) application(w http.ResponseWriter, r *http.Request) {
	app, ok := c.getApplication(w, r)
	if !ok {
		return
	}
	ns := app.Namespace
	page := applicationPage{Frame: c.pageFrame(r, "applications"), App: app}
	// The page follows changes from the Application's resource version:
	// every other read of the page comes after it, so at worst a change
	// is seen twice, never missed.
	page.Events = eventsURL("/applications/"+url.PathEscape(ns)+"/"+url.PathEscape(app.Name)+"/events", "", app.ResourceVersion)
	page.Previews = c.previews(r, page.User, app)
	if d := app.Status.DesiredRevision; d != "" {
		var rev syncv1.Revision
		err := c.users.Get(r.Context(), client.ObjectKey{Namespace: ns, Name: d}, &rev)
		switch {
		case err == nil:
			page.Desired = &rev
		case apierrors.IsForbidden(err):
			page.RevisionError = fmt.Sprintf("Kubernetes refuses to let %s read Revision %s/%s.", page.User, ns, d)
		case apierrors.IsNotFound(err):
			page.RevisionError = fmt.Sprintf("Revision %s/%s does not exist (yet).", ns, d)
		default:
			c.readFailed(w, r, fmt.Sprintf("Revision %s/%s", ns, d), err)
			return
		}
	}
	if app.Status.Phase == syncv1.PhaseAwaitingApproval {
		page.Approve = app.ApproveCommand(app.Status.DesiredRevision)
	}
	for k, v := range app.Annotations {
		page.Annotations = append(page.Annotations, keyValue{k, v})
	}
	sort.Slice(page.Annotations, func(i, j int) bool { return page.Annotations[i].Key < page.Annotations[j].Key })
	c.render(w, http.StatusOK, "application.html", page)
}

// getApplication reads the Application the path names; when the path
// names none or the read fails it has answered the request.
func (c *Console) getApplication(w http.ResponseWriter, r *http.Request) (*syncv1.Application, bool) {
	key, err := applicationKey(r)
	if err != nil {
		c.badRequest(w, r, "applications", err)
		return nil, false
	}
	var app syncv1.Application
	if err := c.users.Get(r.Context(), key, &app); err != nil {
		c.readFailed(w, r, fmt.Sprintf("Application %s/%s", key.Namespace, key.Name), err)
		return nil, false
	}
	return &app, true
}

// badRequest answers a page's malformed path or query.
func (c *Console) badRequest(w http.ResponseWriter, r *http.Request, nav string, err error) {
	c.render(w, http.StatusBadRequest, "message.html", messagePage{Frame: c.pageFrame(r, nav), Title: "Bad request", Message: err.Error()})
}

// render executes a page into memory first, so a failing template answers
// an error page rather than half a page.
func (c *Console) render(w http.ResponseWriter, status int, name string, data any) {
	var b bytes.Buffer
	if err := c.pages.ExecuteTemplate(&b, name, data); err != nil {
		c.log.Error(err, "rendering page", "template", name)
		http.Error(w, "The console failed to render this page.", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}
