// Package delivery sends notifications from a bounded in-memory queue:
// workers make up to three attempts per notification with backoff, follow
// no redirect, and report failures as NotificationFailed Warning Events and
// in kuvryn_sync_notification_deliveries_total, never with the sink URL.
package delivery

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/message"
	"github.com/kuvryn/kuvryn-sync/services/notify-controller/internal/destination"
	"github.com/kuvryn/kuvryn-sync/services/notify-controller/internal/payload"
)

// Attempts is how often a notification is tried before it counts as failed.
const Attempts = 3

// maxEventNoteBytes is the longest note the events API accepts.
const maxEventNoteBytes = 1024

// Options size the queue and pace the attempts.
type Options struct {
	// QueueSize bounds the notifications waiting for a worker; more are dropped.
	QueueSize int
	// Workers deliver in parallel.
	Workers int
	// Backoff is the wait after the first failed attempt, doubled after each further one.
	Backoff time.Duration
	// Timeout bounds one attempt.
	Timeout time.Duration
	// RootCAs verify sink certificates; nil uses the system's.
	RootCAs *x509.CertPool
	// Report, if set, learns the final result of every notification
	// delivered or failed: err is nil once it was delivered.
	Report func(ctx context.Context, sink types.NamespacedName, attempts int, err error)
}

// Job is one notification, or one preview's result, for one sink.
type Job struct {
	// Notification is an Application's transition, for webhook and slack sinks.
	Notification *payload.Notification
	// Preview is a preview Revision's result, for github and gitlab sinks;
	// Notification is then nil.
	Preview  *payload.Preview
	Sink     types.NamespacedName
	SinkType syncv1.SinkType
	// Application and Revision identify what NotificationFailed Events are
	// about: the Application, or for a preview, the preview Revision.
	Application *syncv1.Application
	Revision    *syncv1.Revision
	// Delivered, if set, is called once the sink accepted the notification.
	Delivered func()
}

// Dispatcher holds the queue and runs its workers as a manager Runnable.
type Dispatcher struct {
	opts Options
	// Reader reads sinks and their Secrets without a cache, at delivery, so
	// a rotated URL or key is used at once and no informer holds Secrets.
	reader   client.Reader
	recorder events.EventRecorder
	log      logr.Logger
	http     *http.Client
	queue    chan Job
	started  atomic.Bool
}

// New builds a Dispatcher; Start runs it.
func New(o Options, reader client.Reader, recorder events.EventRecorder, log logr.Logger) *Dispatcher {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = &tls.Config{RootCAs: o.RootCAs, MinVersion: tls.VersionTLS12}
	return &Dispatcher{
		opts:     o,
		reader:   reader,
		recorder: recorder,
		log:      log,
		queue:    make(chan Job, max(1, o.QueueSize)),
		http: &http.Client{
			Transport: transport,
			// A 3xx is a failed delivery: following it would send the body,
			// and its signature, wherever the sink points.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
}

// Enqueue queues j without waiting. A full queue drops it, counts it and
// says so in a NotificationFailed Event; reconciliation never blocks.
func (d *Dispatcher) Enqueue(j Job) bool {
	select {
	case d.queue <- j:
		return true
	default:
	}
	Deliveries.WithLabelValues(string(j.SinkType), ResultDropped).Inc()
	why := fmt.Sprintf("the notification queue is full (%d waiting)", cap(d.queue))
	d.log.Info("notification dropped", d.keysAndValues(j, "reason", why)...)
	d.warn(j, "dropped "+describeJob(j)+": "+why)
	return false
}

// Undeliverable reports a notification that cannot be queued because its
// sink does not exist, with a NotificationFailed Event.
func (d *Dispatcher) Undeliverable(j Job, why string) {
	d.log.Info("notification not delivered", d.keysAndValues(j, "reason", why)...)
	d.warn(j, describeJob(j)+" not delivered: "+why)
}

// Start runs the workers until ctx is done; what is still queued is lost,
// as the guide says.
func (d *Dispatcher) Start(ctx context.Context) error {
	var wg sync.WaitGroup
	for range max(1, d.opts.Workers) {
		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case j := <-d.queue:
					d.deliver(ctx, j)
				}
			}
		})
	}
	d.started.Store(true)
	wg.Wait()
	return nil
}

// NeedLeaderElection is false: only the leader enqueues, and workers that
// already run let a standby report ready.
func (d *Dispatcher) NeedLeaderElection() bool { return false }

// Started reports whether the workers run.
func (d *Dispatcher) Started() bool { return d.started.Load() }

// deliver makes up to Attempts attempts, waiting Backoff, then twice as
// long, between them.
func (d *Dispatcher) deliver(ctx context.Context, j Job) {
	wait := d.opts.Backoff
	var err error
	attempts := 0
	for attempts < Attempts {
		attempts++
		if err = d.attempt(ctx, j); err == nil {
			Deliveries.WithLabelValues(string(j.SinkType), ResultDelivered).Inc()
			d.log.Info("notification delivered", d.keysAndValues(j, "attempts", attempts)...)
			if j.Delivered != nil {
				j.Delivered()
			}
			d.report(ctx, j, attempts, nil)
			return
		}
		var p permanent
		if errors.As(err, &p) || attempts == Attempts {
			break
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait *= 2
	}
	Deliveries.WithLabelValues(string(j.SinkType), ResultFailed).Inc()
	why := fmt.Sprintf("%s failed after %d attempt(s): %v", describeJob(j), attempts, err)
	d.log.Info("notification failed", d.keysAndValues(j, "attempts", attempts, "reason", err.Error())...)
	d.warn(j, why)
	d.report(ctx, j, attempts, err)
}

func (d *Dispatcher) report(ctx context.Context, j Job, attempts int, err error) {
	if d.opts.Report != nil {
		d.opts.Report(ctx, j.Sink, attempts, err)
	}
}

// permanent is a failure another attempt cannot mend: the sink or its
// Secret is missing or refused.
type permanent struct{ error }

// attempt reads the sink and its Secret and posts once.
func (d *Dispatcher) attempt(ctx context.Context, j Job) error {
	dest, err := d.destination(ctx, j)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, d.opts.Timeout)
	defer cancel()
	if j.Preview != nil {
		if dest.Repository == nil {
			return permanent{fmt.Errorf("NotificationSink %s is of type %s; previews need github or gitlab", j.Sink.Name, j.SinkType)}
		}
		return gitHost{http: d.http, dest: dest, current: d.exists(j.Revision)}.preview(ctx, j.Preview)
	}
	if dest.Repository != nil {
		return permanent{fmt.Errorf("NotificationSink %s is of type %s, which receives previews only", j.Sink.Name, j.SinkType)}
	}
	body, err := render(j)
	if err != nil {
		return permanent{err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, dest.URL.String(), bytes.NewReader(body))
	if err != nil {
		return permanent{errors.New("the sink URL cannot be requested")}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "kuvryn-sync-notify-controller")
	if j.SinkType == syncv1.SinkWebhook {
		req.Header.Set(payload.SignatureHeader, payload.Sign(body, dest.HMACKey))
		req.Header.Set(payload.EventHeader, string(j.Notification.Event))
	}
	resp, err := d.http.Do(req)
	if err != nil {
		return errors.New(scrub(describe(err), dest.URL))
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &statusError{code: resp.StatusCode}
	}
	return nil
}

// exists reports, when called, whether rev still exists with the same UID.
func (d *Dispatcher) exists(rev *syncv1.Revision) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		now := &syncv1.Revision{}
		if err := d.reader.Get(ctx, types.NamespacedName{Namespace: rev.Namespace, Name: rev.Name}, now); err != nil {
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			return false, fmt.Errorf("reading preview Revision %s: %w", rev.Name, err)
		}
		return now.UID == rev.UID, nil
	}
}

// destination reads the sink and its Secret as they are now.
func (d *Dispatcher) destination(ctx context.Context, j Job) (*destination.Destination, error) {
	sink := &syncv1.NotificationSink{}
	if err := d.reader.Get(ctx, j.Sink, sink); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, permanent{fmt.Errorf("NotificationSink %s does not exist", j.Sink.Name)}
		}
		return nil, fmt.Errorf("reading NotificationSink %s: %w", j.Sink.Name, err)
	}
	secret := &corev1.Secret{}
	name := types.NamespacedName{Namespace: j.Sink.Namespace, Name: sink.Spec.SecretRef.Name}
	if err := d.reader.Get(ctx, name, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, permanent{fmt.Errorf("Secret %s of NotificationSink %s does not exist", name.Name, j.Sink.Name)}
		}
		return nil, fmt.Errorf("reading Secret %s of NotificationSink %s: %w", name.Name, j.Sink.Name, err)
	}
	dest, err := destination.Parse(secret, sink.Spec.Type)
	if err != nil {
		return nil, permanent{fmt.Errorf("NotificationSink %s: %w", j.Sink.Name, err)}
	}
	return dest, nil
}

func render(j Job) ([]byte, error) {
	if j.SinkType == syncv1.SinkSlack {
		return payload.Slack(j.Notification)
	}
	return payload.Webhook(j.Notification)
}

func describeJob(j Job) string {
	if p := j.Preview; p != nil {
		return fmt.Sprintf("%s result of preview Revision %s to NotificationSink %s (%s)", p.State, p.Revision, j.Sink.Name, j.SinkType)
	}
	n := j.Notification
	return fmt.Sprintf("notification %s of Revision %s to NotificationSink %s (%s)", n.Event, n.Revision, j.Sink.Name, j.SinkType)
}

func (d *Dispatcher) keysAndValues(j Job, kv ...any) []any {
	if p := j.Preview; p != nil {
		return append([]any{
			"namespace", p.Application.Namespace, "application", p.Application.Name, "revision", p.Revision,
			"preview", p.Name, "state", p.State, "sink", j.Sink.Name, "type", j.SinkType,
		}, kv...)
	}
	n := j.Notification
	return append([]any{
		"namespace", n.Application.Namespace, "application", n.Application.Name, "revision", n.Revision,
		"event", n.Event, "sink", j.Sink.Name, "type", j.SinkType, "id", n.ID,
	}, kv...)
}

// warn emits NotificationFailed about the Application, related to the
// Revision; about a preview Revision, which has no Application of its own
// in the preview, when there is no Application.
func (d *Dispatcher) warn(j Job, note string) {
	var regarding, related runtime.Object
	switch {
	case j.Application != nil:
		regarding = j.Application
		if j.Revision != nil {
			related = j.Revision
		}
	case j.Revision != nil:
		regarding = j.Revision
	default:
		return
	}
	d.recorder.Eventf(regarding, related, corev1.EventTypeWarning, syncv1.ReasonNotificationFailed, "Notify",
		"%s", message.Bound(note, maxEventNoteBytes))
}
