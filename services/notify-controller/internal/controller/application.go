package controller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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
	tracker    *transition.Tracker
	dispatcher *delivery.Dispatcher
	now        func() time.Time
}

func (r *applicationReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	app := &syncv1.Application{}
	if err := r.client.Get(ctx, req.NamespacedName, app); err != nil {
		if apierrors.IsNotFound(err) {
			r.tracker.Forget(req.NamespacedName)
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
	fresh := r.tracker.Fresh(req.NamespacedName, transition.Observe(revs.Items))

	sinks, err := r.resolveSinks(ctx, app)
	if err != nil {
		return ctrl.Result{}, err
	}
	for _, o := range fresh {
		r.notify(app, o, sinks)
	}
	if err := r.recordReadiness(ctx, app, sinks); err != nil {
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
		s, err := checkSink(ctx, r.client, r.reader, types.NamespacedName{Namespace: app.Namespace, Name: name})
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

func allReady(sinks []sinkState) bool {
	for _, s := range sinks {
		if s.problem != "" {
			return false
		}
	}
	return true
}

// notify queues o for every sink subscribed to its event. A sink that
// does not exist cannot say its type; it gets a NotificationFailed Event.
func (r *applicationReconciler) notify(app *syncv1.Application, o transition.Occurrence, sinks []sinkState) {
	n := r.notification(app, o)
	for _, s := range sinks {
		if !subscribed(app, s.name, o.Event) {
			continue
		}
		j := delivery.Job{Notification: n, Sink: types.NamespacedName{Namespace: app.Namespace, Name: s.name},
			Application: app, Revision: o.Revision}
		if s.sink == nil {
			r.dispatcher.Undeliverable(j, s.problem)
			continue
		}
		j.SinkType = s.sink.Spec.Type
		r.dispatcher.Enqueue(j)
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

// notification is what every sink hears about o.
func (r *applicationReconciler) notification(app *syncv1.Application, o transition.Occurrence) *payload.Notification {
	rev := o.Revision
	sum := sha256.Sum256([]byte(strings.Join([]string{string(app.UID), rev.Name, string(o.Event), o.Identity}, "\x00")))
	n := &payload.Notification{
		ID:          hex.EncodeToString(sum[:16]),
		Event:       o.Event,
		Application: payload.ApplicationRef{Namespace: app.Namespace, Name: app.Name},
		Revision:    rev.Name,
		Attempt:     rev.Status.Attempt,
		Reason:      o.Reason,
		Message:     ssa.Truncate(o.Message),
		Time:        r.now().UTC(),
	}
	if src := rev.Status.Source; src != nil {
		n.SourceRevision = src.Commit
	}
	if p := rev.Status.Plan; p != nil {
		n.Plan = &payload.Plan{Digest: p.Digest, Summary: p.Summary}
	}
	if o.Event == syncv1.NotificationAwaitingApproval {
		n.ApproveCommand = app.ApproveCommand(rev.Name)
	}
	return n
}

// recordReadiness applies NotificationsReady as field manager kuvryn-notify:
// False naming every sink that cannot be delivered to, True otherwise, and
// no condition at all for an Application without notifications.
func (r *applicationReconciler) recordReadiness(ctx context.Context, app *syncv1.Application, sinks []sinkState) error {
	current := meta.FindStatusCondition(app.Status.Conditions, syncv1.ConditionNotificationsReady)
	var conds []metav1.Condition
	if len(sinks) > 0 {
		want := readiness(sinks, app.Generation)
		if sameCondition(current, want) {
			return nil
		}
		conds = ssa.Conditions(app.Status.Conditions, []string{syncv1.ConditionNotificationsReady}, want)
	} else if current == nil {
		return nil
	}
	status := map[string]any{"conditions": conds}
	if err := ssa.ApplyStatus(ctx, r.client, app, syncv1.FieldManagerNotify, status); err != nil {
		return fmt.Errorf("recording NotificationsReady of Application %s/%s: %w", app.Namespace, app.Name, err)
	}
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
