package controller

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/ssa"
	"github.com/kuvryn/kuvryn-sync/services/notify-controller/internal/delivery"
	"github.com/kuvryn/kuvryn-sync/services/notify-controller/internal/destination"
	"github.com/kuvryn/kuvryn-sync/services/notify-controller/internal/payload"
	"github.com/kuvryn/kuvryn-sync/services/notify-controller/internal/transition"
)

// applicationReconciler finds each Application's transitions and reports
// whether its sinks can be delivered to.
type applicationReconciler struct {
	// client reads through the manager's cache and applies status.
	client client.Client
	// reader reads Secrets without a cache: the controller may only get them.
	reader     client.Reader
	ledger     *transition.Ledger
	dispatcher *delivery.Dispatcher
	now        func() time.Time
	// wakeups reconcile an Application after a delivery, to record it.
	wakeups chan event.GenericEvent
}

func (r *applicationReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	app := &syncv1.Application{}
	if err := r.client.Get(ctx, req.NamespacedName, app); err != nil {
		if apierrors.IsNotFound(err) {
			r.ledger.Forget(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	var revs syncv1.RevisionList
	if err := r.client.List(ctx, &revs, client.InNamespace(app.Namespace),
		client.MatchingFields{syncv1.RevisionApplicationField: app.Name}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing the Revisions of Application %s/%s: %w", app.Namespace, app.Name, err)
	}
	sort.Slice(revs.Items, func(i, j int) bool { return revs.Items[i].Name < revs.Items[j].Name })

	sinks, err := r.resolveSinks(ctx, app)
	if err != nil {
		return ctrl.Result{}, err
	}
	want := wanted(app, transition.Observe(revs.Items), sinks)
	for _, d := range r.ledger.Due(req.NamespacedName, app.Status.DeliveredNotifications, want) {
		r.notify(app, d, sinks)
	}
	if err := r.recordStatus(ctx, app, sinks, want); err != nil {
		return ctrl.Result{}, err
	}
	switch {
	case len(sinks) == 0:
		return ctrl.Result{}, nil
	case !allReady(sinks):
		return ctrl.Result{RequeueAfter: notReadyRetry}, nil
	}
	return ctrl.Result{RequeueAfter: resync}, nil
}

// sinkState is one subscribed sink as it is now.
type sinkState struct {
	name string
	// sink is nil when it does not exist.
	sink *syncv1.NotificationSink
	// problem says why the sink cannot be delivered to; empty when it can.
	problem string
}

// resolveSinks reads every sink the Application subscribes to, in the
// order first named, and checks its Secret.
func (r *applicationReconciler) resolveSinks(ctx context.Context, app *syncv1.Application) ([]sinkState, error) {
	var out []sinkState
	seen := map[string]bool{}
	for _, sub := range app.Spec.Notifications {
		name := sub.SinkRef.Name
		if seen[name] {
			continue
		}
		seen[name] = true
		s, err := checkSubscribedSink(ctx, r.client, r.reader, types.NamespacedName{Namespace: app.Namespace, Name: name})
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// checkSink reads a sink from c and its Secret from reader and says what,
// if anything, keeps it from being delivered to. Only errors of the API
// server are returned; a missing or refused Secret is a problem.
func checkSink(ctx context.Context, c, reader client.Reader, key types.NamespacedName) (sinkState, error) {
	st := sinkState{name: key.Name}
	sink := &syncv1.NotificationSink{}
	if err := c.Get(ctx, key, sink); err != nil {
		if apierrors.IsNotFound(err) {
			st.problem = fmt.Sprintf("NotificationSink %s does not exist in namespace %s", key.Name, key.Namespace)
			return st, nil
		}
		return st, fmt.Errorf("reading NotificationSink %s/%s: %w", key.Namespace, key.Name, err)
	}
	st.sink = sink
	secretName := sink.Spec.SecretRef.Name
	secret := &corev1.Secret{}
	if err := reader.Get(ctx, types.NamespacedName{Namespace: key.Namespace, Name: secretName}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			st.problem = fmt.Sprintf("NotificationSink %s: Secret %s does not exist", key.Name, secretName)
			return st, nil
		}
		return st, fmt.Errorf("reading Secret %s/%s of NotificationSink %s: %w", key.Namespace, secretName, key.Name, err)
	}
	if _, err := destination.Parse(secret, sink.Spec.Type); err != nil {
		st.problem = fmt.Sprintf("NotificationSink %s: %v", key.Name, err)
	}
	return st, nil
}

// checkSubscribedSink is checkSink for a sink an Application subscribes
// to, which must be of type webhook or slack.
func checkSubscribedSink(ctx context.Context, c, reader client.Reader, key types.NamespacedName) (sinkState, error) {
	st, err := checkSink(ctx, c, reader, key)
	if err == nil && st.problem == "" && receivesPreviews(st.sink.Spec.Type) {
		st.problem = fmt.Sprintf("NotificationSink %s is of type %s, which receives previews only; Application notifications need type webhook or slack",
			key.Name, st.sink.Spec.Type)
	}
	return st, err
}

func allReady(sinks []sinkState) bool {
	for _, s := range sinks {
		if s.problem != "" {
			return false
		}
	}
	return true
}

// wanted are the deliveries the Revisions' occurrences call for: one per
// occurrence and sink subscribed to its event.
func wanted(app *syncv1.Application, occ []transition.Occurrence, sinks []sinkState) []transition.Delivery {
	var out []transition.Delivery
	for _, o := range occ {
		id := o.ID(app.UID)
		for _, s := range sinks {
			if subscribed(app, s.name, o.Event) {
				out = append(out, transition.Delivery{Sink: s.name, ID: id, Occurrence: o})
			}
		}
	}
	return out
}

// notify queues d, and has the ledger told once its sink accepted it. A
// sink that does not exist cannot say its type; it gets a
// NotificationFailed Event.
func (r *applicationReconciler) notify(app *syncv1.Application, d transition.Delivery, sinks []sinkState) {
	key := client.ObjectKeyFromObject(app)
	j := delivery.Job{Notification: r.notification(app, d), Sink: types.NamespacedName{Namespace: app.Namespace, Name: d.Sink},
		Application: app, Revision: d.Occurrence.Revision}
	i := slices.IndexFunc(sinks, func(s sinkState) bool { return s.name == d.Sink })
	if sinks[i].sink == nil {
		r.dispatcher.Undeliverable(j, sinks[i].problem)
		return
	}
	j.SinkType = sinks[i].sink.Spec.Type
	j.Delivered = func() {
		r.ledger.Delivered(key, d)
		r.wake(key)
	}
	r.dispatcher.Enqueue(j)
}

// wake reconciles the Application without waiting: a full buffer leaves
// the delivery to be recorded by its next reconcile.
func (r *applicationReconciler) wake(key types.NamespacedName) {
	select {
	case r.wakeups <- event.GenericEvent{Object: &syncv1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}}:
	default:
	}
}

func subscribed(app *syncv1.Application, sink string, event syncv1.NotificationEvent) bool {
	for _, sub := range app.Spec.Notifications {
		if sub.SinkRef.Name == sink && slices.Contains(sub.Events, event) {
			return true
		}
	}
	return false
}

// notification is what d's sink hears.
func (r *applicationReconciler) notification(app *syncv1.Application, d transition.Delivery) *payload.Notification {
	o := d.Occurrence
	rev := o.Revision
	n := &payload.Notification{
		ID:          d.ID,
		Event:       o.Event,
		Application: payload.ApplicationRef{Namespace: app.Namespace, Name: app.Name},
		Revision:    rev.Name,
		Attempt:     rev.Status.Attempt,
		Reason:      o.Reason,
		Message:     ssa.Truncate(o.Message),
		Time:        r.now().UTC(),
	}
	n.SourceRevision = sourceCommit(app, rev)
	if p := rev.Status.Plan; p != nil {
		n.Plan = &payload.Plan{Digest: p.Digest, Summary: p.Summary}
	}
	if o.Event == syncv1.NotificationAwaitingApproval {
		n.ApproveCommand = app.ApproveCommand(rev.Name)
	}
	return n
}

// sourceCommit is the commit rev was rendered from: for the Application's
// desired Revision the commit that rendered it this time, which a revert
// makes newer than the first commit its spec records.
func sourceCommit(app *syncv1.Application, rev *syncv1.Revision) string {
	if rev.Name == app.Status.DesiredRevision && app.Status.SourceCommit != "" {
		return app.Status.SourceCommit
	}
	if rev.Spec.Source != nil {
		return rev.Spec.Source.Commit
	}
	return ""
}

// recordStatus applies, as field manager kuvryn-notify, NotificationsReady
// (False naming every sink that cannot be delivered to, True otherwise, and
// no condition at all for an Application without notifications) and the
// record of delivered notifications. It writes only when the condition
// changes or a notification was delivered, so a delivery costs one write at
// most and several delivered together share one.
func (r *applicationReconciler) recordStatus(ctx context.Context, app *syncv1.Application, sinks []sinkState, want []transition.Delivery) error {
	key := client.ObjectKeyFromObject(app)
	record, delivered := r.ledger.Record(key, app.Status.DeliveredNotifications, want)
	current := meta.FindStatusCondition(app.Status.Conditions, syncv1.ConditionNotificationsReady)
	var conds []metav1.Condition
	changed := delivered > 0
	if len(sinks) > 0 {
		cond := readiness(sinks, app.Generation)
		changed = changed || !sameCondition(current, cond)
		conds = ssa.Conditions(app.Status.Conditions, []string{syncv1.ConditionNotificationsReady}, cond)
	} else if current != nil {
		changed = true
	}
	if !changed {
		return nil
	}
	status := map[string]any{"conditions": conds}
	if len(record) > 0 {
		status["deliveredNotifications"] = record
	}
	if err := ssa.ApplyStatus(ctx, r.client, app, syncv1.FieldManagerNotify, status); err != nil {
		return fmt.Errorf("recording NotificationsReady and delivered notifications of Application %s/%s: %w", app.Namespace, app.Name, err)
	}
	r.ledger.Recorded(key, record, delivered)
	return nil
}

func readiness(sinks []sinkState, generation int64) metav1.Condition {
	var problems, names []string
	for _, s := range sinks {
		names = append(names, s.name)
		if s.problem != "" {
			problems = append(problems, s.problem)
		}
	}
	if len(problems) > 0 {
		return ssa.Condition(syncv1.ConditionNotificationsReady, false, syncv1.ReasonSinkNotReady, strings.Join(problems, "; "), generation)
	}
	return ssa.Condition(syncv1.ConditionNotificationsReady, true, syncv1.ReasonSucceeded,
		"NotificationSinks ready: "+strings.Join(names, ", "), generation)
}

// sameCondition reports whether applying want would change nothing but
// the time of the write.
func sameCondition(current *metav1.Condition, want metav1.Condition) bool {
	return current != nil && current.Status == want.Status && current.Reason == want.Reason &&
		current.Message == want.Message && current.ObservedGeneration == want.ObservedGeneration
}
