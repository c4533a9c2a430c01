package console

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// Live updates, as Argo CD's UI follows status: a page that changes with
// status names an event stream and the resource version it was read at
// (the #live element); static/live.js opens it with the browser's
// EventSource and, on each "change" event, fetches the page again and
// swaps in its [data-live] parts. The stream is a watch made with the
// person's own token, so RBAC bounds it as it bounds the page, and it is
// bounded in time: it ends after streamLifetime and EventSource reconnects,
// sending the last event ID, which holds the resource version each watch
// reached, so nothing that happened in between is missed. No list is
// polled.
const (
	// streamLifetime bounds one stream.
	streamLifetime = 5 * time.Minute
	// maxStreams bounds the streams one console serves at once; beyond it
	// pages answer 503 and stay as loaded.
	maxStreams = 256
	// keepAliveEvery sends a comment through proxies that drop idle
	// connections.
	keepAliveEvery = 25 * time.Second
	// coalesce: at most one change event per interval, however busy the
	// watched objects are, since each makes the page fetch itself again.
	coalesce = time.Second
	// reconnectMillis is EventSource's wait before it reconnects.
	reconnectMillis = 2000
	// maxResumeBytes bounds the resource versions a request resumes from.
	maxResumeBytes = 256
)

// watchSpec is one watch of a stream.
type watchSpec struct {
	list client.ObjectList
	opts []client.ListOption
	// optional watches may be refused by RBAC; the stream goes on without.
	optional bool
}

// applicationsEvents is the event stream of the Applications page: a
// watch of Applications in the query's namespace, or all.
func (c *Console) applicationsEvents(w http.ResponseWriter, r *http.Request) {
	q, err := parseListQuery(r, "Applications", "state")
	if err != nil {
		c.badRequest(w, r, "applications", err)
		return
	}
	var opts []client.ListOption
	if q.Namespace != "" {
		opts = append(opts, client.InNamespace(q.Namespace))
	}
	c.stream(w, r, "Applications"+inNamespace(q.Namespace), []watchSpec{{list: &syncv1.ApplicationList{}, opts: opts}})
}

// applicationEvents is the event stream of an Application's page: its
// Application, and the Revisions labelled with it (desired and preview),
// when the person may watch them.
func (c *Console) applicationEvents(w http.ResponseWriter, r *http.Request) {
	key, err := applicationKey(r)
	if err != nil {
		c.badRequest(w, r, "applications", err)
		return
	}
	c.stream(w, r, fmt.Sprintf("Application %s/%s", key.Namespace, key.Name), []watchSpec{
		{list: &syncv1.ApplicationList{}, opts: []client.ListOption{client.InNamespace(key.Namespace), client.MatchingFields{"metadata.name": key.Name}}},
		{list: &syncv1.RevisionList{}, opts: []client.ListOption{client.InNamespace(key.Namespace), client.MatchingLabels{syncv1.ApplicationLabel: key.Name}}, optional: true},
	})
}

// resumeFrom is where each watch starts: the resource versions of the
// Last-Event-ID EventSource sends on reconnecting (one per watch,
// space-separated, as stream writes them), else the page's rv for all.
// Both come from the request, so each version is checked before it is
// sent to the API server.
func resumeFrom(lastEventID, rv string, watches int) ([]string, error) {
	if lastEventID != "" && len(lastEventID) <= maxResumeBytes {
		if rvs := strings.Fields(lastEventID); len(rvs) == watches && !slices.ContainsFunc(rvs, notResourceVersion) {
			return rvs, nil
		}
	}
	if rv == "" || len(rv) > maxResumeBytes || notResourceVersion(rv) {
		return nil, fmt.Errorf("rv %s is not the resource version a page was read at; reload the page", quoted(rv))
	}
	rvs := make([]string, watches)
	for i := range rvs {
		rvs[i] = rv
	}
	return rvs, nil
}

// notResourceVersion: the API server's resource versions are opaque, but
// they are decimal numbers today and never more than digits and letters.
func notResourceVersion(rv string) bool {
	return rv == "" || strings.ContainsFunc(rv, func(r rune) bool {
		return (r < '0' || r > '9') && (r < 'a' || r > 'z') && (r < 'A' || r > 'Z')
	})
}

// watchEvent is what one watch of a stream saw.
type watchEvent struct {
	watch int
	event watch.Event
	// closed: the watch ended (its timeout, or the API server).
	closed bool
}

// stream answers a text/event-stream of "change" events while the watches
// see changes, for at most c.streamLifetime.
func (c *Console) stream(w http.ResponseWriter, r *http.Request, what string, specs []watchSpec) {
	rvs, err := resumeFrom(r.Header.Get("Last-Event-ID"), r.URL.Query().Get("rv"), len(specs))
	if err != nil {
		c.badRequest(w, r, "applications", err)
		return
	}
	select {
	case c.streams <- struct{}{}:
		defer func() { <-c.streams }()
	default:
		w.Header().Set("Retry-After", "60")
		http.Error(w, "The console follows too many pages at once; reload later for live updates.", http.StatusServiceUnavailable)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), c.streamLifetime)
	defer cancel()
	events := make(chan watchEvent)
	for i, spec := range specs {
		wi, err := c.watch(ctx, spec, rvs[i])
		switch {
		case err == nil:
		case spec.optional && apierrors.IsForbidden(err):
			continue
		case apierrors.IsResourceExpired(err) || apierrors.IsGone(err):
			// The page is older than the API server keeps history: it
			// fetches itself again, and the stream starts afresh.
			if rvs[i], err = c.currentVersion(ctx, spec); err == nil {
				c.expired(w, rvs)
				return
			}
			fallthrough
		default:
			c.readFailed(w, r, what, err)
			return
		}
		defer wi.Stop()
		go forward(ctx, i, wi, events)
	}

	rc := http.NewResponseController(w)
	// The listener's write timeout is for pages; a stream lives longer.
	_ = rc.SetWriteDeadline(time.Now().Add(c.streamLifetime + keepAliveEvery))
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "retry: %d\n\n", reconnectMillis)
	_ = rc.Flush()

	keepAlive := time.NewTicker(keepAliveEvery)
	defer keepAlive.Stop()
	// due is set while a change waits to be sent; the stream never tells
	// EventSource an ID past a change it has not sent.
	var due <-chan time.Time
	var sent time.Time
	change := func() {
		due, sent = nil, time.Now()
		fmt.Fprintf(w, "id: %s\nevent: change\ndata: status\n\n", strings.Join(rvs, " "))
		_ = rc.Flush()
	}
	defer func() {
		if due != nil {
			change()
		}
	}()
	for {
		select {
		case ev := <-events:
			if ev.closed {
				return
			}
			if ev.event.Type == watch.Error {
				err := apierrors.FromObject(ev.event.Object)
				if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
					if rv, err := c.currentVersion(ctx, specs[ev.watch]); err == nil {
						rvs[ev.watch] = rv
						change()
					}
				}
				return
			}
			o, ok := ev.event.Object.(client.Object)
			if !ok {
				continue
			}
			rvs[ev.watch] = o.GetResourceVersion()
			switch {
			case ev.event.Type != watch.Bookmark:
				if due == nil {
					due = time.After(time.Until(sent.Add(coalesce)))
				}
			case due == nil:
				// An ID-only message moves EventSource's last event ID.
				fmt.Fprintf(w, "id: %s\n\n", strings.Join(rvs, " "))
				_ = rc.Flush()
			}
		case <-due:
			change()
		case <-keepAlive.C:
			fmt.Fprint(w, ": keep-alive\n\n")
			_ = rc.Flush()
		case <-ctx.Done():
			return
		}
	}
}

// expired answers a change event whose ID resumes from rvs, and ends the
// stream, so the page fetches itself again and EventSource reconnects
// from versions the API server still has.
func (c *Console) expired(w http.ResponseWriter, rvs []string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "retry: %d\nid: %s\nevent: change\ndata: status\n\n", reconnectMillis, strings.Join(rvs, " "))
}

// watch starts spec's watch at rv, as the person, ending with the stream.
func (c *Console) watch(ctx context.Context, spec watchSpec, rv string) (watch.Interface, error) {
	timeout := int64(c.streamLifetime / time.Second)
	if timeout < 1 {
		timeout = 1
	}
	raw := &metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true, TimeoutSeconds: &timeout}
	return c.users.Watch(ctx, spec.list.DeepCopyObject().(client.ObjectList), append(spec.opts[:len(spec.opts):len(spec.opts)], &client.ListOptions{Raw: raw})...)
}

// currentVersion is the resource version spec's objects are at now: that
// of a one-object list, the cheapest read that tells it.
func (c *Console) currentVersion(ctx context.Context, spec watchSpec) (string, error) {
	list := spec.list.DeepCopyObject().(client.ObjectList)
	if err := c.users.List(ctx, list, append(spec.opts[:len(spec.opts):len(spec.opts)], client.Limit(1))...); err != nil {
		return "", err
	}
	return list.GetResourceVersion(), nil
}

// forward sends one watch's events to the stream until it ends.
func forward(ctx context.Context, i int, wi watch.Interface, events chan<- watchEvent) {
	for ev := range wi.ResultChan() {
		select {
		case events <- watchEvent{watch: i, event: ev}:
		case <-ctx.Done():
			return
		}
	}
	select {
	case events <- watchEvent{watch: i, closed: true}:
	case <-ctx.Done():
	}
}
