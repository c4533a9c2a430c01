// Package controller is the notify-controller: it watches Applications and
// their Revisions, turns each lifecycle transition their status shows into
// one notification per subscribed sink, hands them to the delivery queue,
// and reports NotificationsReady on Applications and Ready on sinks. It
// also hands each preview Revision's result to its Repository's github or
// gitlab sink.
package controller

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	crsource "sigs.k8s.io/controller-runtime/pkg/source"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/eventrecorder"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/services/notify-controller/internal/delivery"
	"github.com/kuvryn/kuvryn-sync/services/notify-controller/internal/transition"
)

const (
	// applicationSinkIndex indexes Applications by the sinks they subscribe to.
	applicationSinkIndex = "spec.notifications.sinkRef.name"
	// resync re-reads the Secrets of ready sinks: the controller may not
	// watch Secrets, so a changed one is noticed this late at the most.
	resync = 5 * time.Minute
	// notReadyRetry re-reads the Secrets of sinks that are not ready, so a
	// fix shows soon.
	notReadyRetry = 30 * time.Second
	// wakeupBuffer holds the Applications whose deliveries wait to be
	// recorded; when it is full, the next reconcile records them.
	wakeupBuffer = 1024
)

// Options configure the controllers.
type Options struct {
	Delivery delivery.Options
}

// Controllers are what Setup added to the manager.
type Controllers struct {
	Dispatcher *delivery.Dispatcher
	cache      cache.Cache
}

// Setup adds the Application and NotificationSink controllers, the delivery
// workers and a readiness check that fails until both can do their work.
func Setup(ctx context.Context, mgr ctrl.Manager, o Options) (*Controllers, error) {
	log := ctrl.Log.WithName("notify")
	rec, err := eventrecorder.New(mgr, syncv1.FieldManagerNotify)
	if err != nil {
		return nil, err
	}
	o.Delivery.Report = deliveredCondition{client: mgr.GetClient(), log: log.WithName("delivered")}.report
	d := delivery.New(o.Delivery, mgr.GetAPIReader(), rec, log.WithName("delivery"))
	if err := mgr.Add(d); err != nil {
		return nil, err
	}
	if err := index(ctx, mgr); err != nil {
		return nil, err
	}
	apps := &applicationReconciler{
		client: mgr.GetClient(), reader: mgr.GetAPIReader(), ledger: transition.NewLedger(),
		dispatcher: d, now: time.Now, wakeups: make(chan event.GenericEvent, wakeupBuffer),
	}
	if err := apps.setup(mgr); err != nil {
		return nil, err
	}
	previews := &previewReconciler{client: mgr.GetClient(), reader: mgr.GetAPIReader(), dispatcher: d,
		sent: map[types.NamespacedName]*previewRecord{}}
	if err := previews.setup(mgr); err != nil {
		return nil, err
	}
	sinks := &sinkReconciler{client: mgr.GetClient(), reader: mgr.GetAPIReader()}
	if err := sinks.setup(mgr); err != nil {
		return nil, err
	}
	c := &Controllers{Dispatcher: d, cache: mgr.GetCache()}
	if err := mgr.AddReadyzCheck("controllers", c.ready); err != nil {
		return nil, err
	}
	return c, nil
}

func index(ctx context.Context, mgr ctrl.Manager) error {
	if err := manager.IndexRevisionsByApplication(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &syncv1.Application{}, applicationSinkIndex, func(obj client.Object) []string {
		var names []string
		for _, n := range obj.(*syncv1.Application).Spec.Notifications {
			names = append(names, n.SinkRef.Name)
		}
		return names
	}); err != nil {
		return fmt.Errorf("indexing Applications by %s: %w", applicationSinkIndex, err)
	}
	return nil
}

// watched are the kinds the controllers read from the cache.
var watched = []client.Object{&syncv1.Application{}, &syncv1.Revision{}, &syncv1.NotificationSink{}, &syncv1.Repository{}}

// ready fails until the caches the controllers read have synced and the
// delivery workers run. A standby replica is ready on the same terms, so a
// rolling update with leader election completes.
func (c *Controllers) ready(req *http.Request) error {
	if !c.Dispatcher.Started() {
		return errors.New("delivery workers not started")
	}
	for _, obj := range watched {
		inf, err := c.cache.GetInformer(req.Context(), obj, cache.BlockUntilSynced(false))
		if err != nil {
			return err
		}
		if !inf.HasSynced() {
			return fmt.Errorf("cache of %T not synced", obj)
		}
	}
	return nil
}

// applicationEvents enqueues an Application when it appears, when its
// spec (its subscriptions) changes and when it is deleted. Its status
// transitions are read from its Revisions.
func applicationEvents() handler.EventHandler {
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(e.Object)})
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() {
				q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(e.ObjectNew)})
			}
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(e.Object)})
		},
	}
}

// revisionEvents wakes the Application a Revision belongs to.
func revisionEvents() handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
		if app, ok := applicationOf(obj); ok {
			return []reconcile.Request{{NamespacedName: app}}
		}
		return nil
	})
}

// applicationOf is the Application a Revision belongs to.
func applicationOf(obj client.Object) (types.NamespacedName, bool) {
	rev, ok := obj.(*syncv1.Revision)
	if !ok {
		return types.NamespacedName{}, false
	}
	return rev.ApplicationKey(), true
}

// sinkEvents wakes the Applications that subscribe to a sink, so their
// NotificationsReady follows it.
func (r *applicationReconciler) sinkEvents() handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
		var apps syncv1.ApplicationList
		if err := r.client.List(ctx, &apps, client.InNamespace(obj.GetNamespace()),
			client.MatchingFields{applicationSinkIndex: obj.GetName()}); err != nil {
			logr.FromContextOrDiscard(ctx).Error(err, "listing the Applications of a NotificationSink", "sink", obj.GetName())
			return nil
		}
		reqs := make([]reconcile.Request, 0, len(apps.Items))
		for _, a := range apps.Items {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&a)})
		}
		return reqs
	})
}

func (r *applicationReconciler) setup(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		WithOptions(manager.ControllerOptions()).
		Named("notify-application").
		Watches(&syncv1.Application{}, applicationEvents()).
		Watches(&syncv1.Revision{}, revisionEvents()).
		Watches(&syncv1.NotificationSink{}, r.sinkEvents()).
		WatchesRawSource(crsource.Channel(r.wakeups, &handler.EnqueueRequestForObject{})).
		Complete(r)
}
