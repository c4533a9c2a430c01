package console

import (
	"bufio"
	"context"
	"html"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

var eventsAttr = regexp.MustCompile(`<p id="live" class="live" data-events="([^"]+)"></p>`)

// eventsOf reads a page and returns its live-update stream's URL.
func (f *fixture) eventsOf(path string, s *http.Cookie) string {
	f.t.Helper()
	resp := f.do(http.MethodGet, path, []*http.Cookie{s}, nil)
	m := eventsAttr.FindStringSubmatch(resp.body)
	if resp.status != http.StatusOK || m == nil {
		f.t.Fatalf("GET %s: %d without a live element:\n%s", path, resp.status, resp.body)
	}
	return html.UnescapeString(m[1])
}

// sseEvent is one dispatched server-sent event; an ID-only message has an
// empty Type and Data.
type sseEvent struct{ ID, Type, Data string }

// stream is an open event stream, read as EventSource reads it.
type stream struct {
	status int
	events chan sseEvent
	// lastID is the last event ID, as EventSource sends it on reconnecting.
	lastID string
}

// openStream opens path's event stream with the session cookie and, when
// set, the Last-Event-ID a reconnecting EventSource sends.
func (f *fixture) openStream(path string, s *http.Cookie, lastEventID string) *stream {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	f.t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.url+path, nil)
	must(f.t, err)
	req.AddCookie(s)
	req.Header.Set("Accept", "text/event-stream")
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := noRedirects.Do(req)
	must(f.t, err)
	st := &stream{status: resp.StatusCode, events: make(chan sseEvent, 64)}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		close(st.events)
		return st
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		f.t.Errorf("Content-Type %q", ct)
	}
	go func() {
		defer resp.Body.Close()
		defer close(st.events)
		sc := bufio.NewScanner(resp.Body)
		var ev sseEvent
		var id string
		for sc.Scan() {
			line := sc.Text()
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch {
			case line == "":
				ev.ID = id
				st.events <- ev
				ev = sseEvent{}
			case field == "id":
				id = value
			case field == "event":
				ev.Type = value
			case field == "data":
				ev.Data = value
			}
		}
	}()
	return st
}

// next returns the next change event, or false when the stream ended
// first; ID-only messages and comments move lastID only.
func (st *stream) next(t *testing.T) (sseEvent, bool) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-st.events:
			if !ok {
				return sseEvent{}, false
			}
			if ev.ID != "" {
				st.lastID = ev.ID
			}
			if ev.Type == "change" {
				return ev, true
			}
		case <-timeout:
			t.Fatal("no change event and no end of the stream within 30s")
		}
	}
}

// setPhase writes an Application's status.phase as the sync-controller would.
func setPhase(t *testing.T, ns, name string, phase syncv1.RevisionPhase) {
	t.Helper()
	app := &syncv1.Application{}
	must(t, admin.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, app))
	app.Status.Phase = phase
	must(t, admin.Status().Update(context.Background(), app))
}

// TestLiveUpdates_StreamsStatusChanges: the Application page's stream
// sends a change when its Application's status changes and when one of
// its Revisions (a preview's) is planned; the Applications page's stream
// when an Application in its namespace changes. Each change's ID holds
// where each watch is, for EventSource to resume from.
func TestLiveUpdates_StreamsStatusChanges(t *testing.T) {
	f := start(t)
	f.waitingApplication("shop", nil)
	f.application("billing", nil, nil)
	s := f.signIn(f.token("viewer", true))

	page := f.openStream(f.eventsOf("/applications/"+f.ns+"/shop", s), s, "")
	if page.status != http.StatusOK {
		t.Fatalf("stream: %d", page.status)
	}
	setPhase(t, f.ns, "shop", syncv1.PhaseApplying)
	ev, ok := page.next(t)
	if !ok || ev.Data != "status" || len(strings.Fields(ev.ID)) != 2 {
		t.Fatalf("after a status change: %+v, %v", ev, ok)
	}
	f.previewRevision("shop-pr-12", "shop", "pr-12", previewPlan(f.ns))
	if _, ok := page.next(t); !ok {
		t.Fatal("no change event after a preview Revision was planned")
	}

	list := f.openStream(f.eventsOf("/applications?namespace="+f.ns, s), s, "")
	if list.status != http.StatusOK {
		t.Fatalf("list stream: %d", list.status)
	}
	setPhase(t, f.ns, "billing", syncv1.PhaseFailed)
	if ev, ok := list.next(t); !ok || len(strings.Fields(ev.ID)) != 1 {
		t.Fatalf("after billing changed: %+v, %v", ev, ok)
	}
}

// TestLiveUpdates_StreamsEndAndResumeFromTheLastEventID: a stream ends by
// itself after its lifetime; reconnecting with the last event ID, as
// EventSource does, sends what changed while it was away, and nothing
// when nothing did.
func TestLiveUpdates_StreamsEndAndResumeFromTheLastEventID(t *testing.T) {
	f := start(t)
	f.console.streamLifetime = 2 * time.Second
	f.waitingApplication("shop", nil)
	s := f.signIn(f.token("viewer", true))
	path := f.eventsOf("/applications/"+f.ns+"/shop", s)

	first := f.openStream(path, s, "")
	setPhase(t, f.ns, "shop", syncv1.PhaseApplying)
	if _, ok := first.next(t); !ok {
		t.Fatal("no change event")
	}
	for {
		if _, ok := first.next(t); !ok {
			break
		}
	}
	setPhase(t, f.ns, "shop", syncv1.PhaseHealthy)
	again := f.openStream(path, s, first.lastID)
	if _, ok := again.next(t); !ok {
		t.Fatal("the change made between streams was not sent on reconnecting")
	}
	for {
		if _, ok := again.next(t); !ok {
			break
		}
	}
	quiet := f.openStream(path, s, again.lastID)
	if ev, ok := quiet.next(t); ok {
		t.Errorf("a change was sent again on reconnecting: %+v", ev)
	}
}

// TestLiveUpdates_RefusedAndBadRequests: the stream is read with the
// person's token, so one without rights is refused; a page's resource
// version that is missing or malformed is a bad request.
func TestLiveUpdates_RefusedAndBadRequests(t *testing.T) {
	f := start(t)
	f.waitingApplication("shop", nil)
	viewer := f.signIn(f.token("viewer", true))
	nobody := f.signIn(f.token("nobody", false))
	path := f.eventsOf("/applications/"+f.ns+"/shop", viewer)
	tests := []struct {
		name   string
		path   string
		s      *http.Cookie
		status int
	}{
		{"no rights", path, nobody, http.StatusForbidden},
		{"no rights on the list", "/applications/events?namespace=" + f.ns + "&rv=1", nobody, http.StatusForbidden},
		{"no resource version", "/applications/" + f.ns + "/shop/events", viewer, http.StatusBadRequest},
		{"a control character", "/applications/" + f.ns + "/shop/events?rv=%0A1", viewer, http.StatusBadRequest},
		{"a bad path", "/applications/" + f.ns + "/NOT_A_NAME/events?rv=1", viewer, http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if st := f.openStream(tt.path, tt.s, ""); st.status != tt.status {
				t.Errorf("GET %s: %d, want %d", tt.path, st.status, tt.status)
			}
		})
	}
}

// TestLiveUpdates_StreamsOutliveTheServersTimeouts: the console's listener
// bounds reads and writes for pages (serve.Listener: 30s each); a stream
// lives past both and still sends changes. Here they are 1s, and the
// change comes after 2s.
func TestLiveUpdates_StreamsOutliveTheServersTimeouts(t *testing.T) {
	f := start(t)
	f.console.streamLifetime = 4 * time.Second
	srv := httptest.NewUnstartedServer(f.console.Handler())
	srv.Config.ReadTimeout, srv.Config.WriteTimeout = time.Second, time.Second
	srv.Start()
	t.Cleanup(srv.Close)
	timed := *f
	timed.url = srv.URL
	f.waitingApplication("shop", nil)
	s := timed.signIn(f.token("viewer", true))

	st := timed.openStream(timed.eventsOf("/applications/"+f.ns+"/shop", s), s, "")
	time.Sleep(2 * time.Second)
	setPhase(t, f.ns, "shop", syncv1.PhaseApplying)
	if _, ok := st.next(t); !ok {
		t.Fatal("the stream ended at the server's read or write timeout")
	}
}
