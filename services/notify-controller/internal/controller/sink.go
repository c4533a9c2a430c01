package controller

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/pkg/ssa"
)

// sinkReconciler reports a NotificationSink's Ready condition: whether its
// Secret holds what its type needs.
type sinkReconciler struct {
	client client.Client
	reader client.Reader
}

func (r *sinkReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	st, err := checkSink(ctx, r.client, r.reader, req.NamespacedName)
	if err != nil || st.sink == nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	sink := st.sink
	if st.problem == "" {
		st.problem = r.misuse(ctx, sink)
	}
	want := ssa.Condition(syncv1.ConditionReady, true, syncv1.ReasonSucceeded,
		fmt.Sprintf("Secret %s holds a valid %s destination", sink.Spec.SecretRef.Name, sink.Spec.Type), sink.Generation)
	retry := resync
	if st.problem != "" {
		want = ssa.Condition(syncv1.ConditionReady, false, syncv1.ReasonSinkNotReady, st.problem, sink.Generation)
		retry = notReadyRetry
	}
	current := meta.FindStatusCondition(sink.Status.Conditions, syncv1.ConditionReady)
	if sameCondition(current, want) && sink.Status.ObservedGeneration == sink.Generation {
		return ctrl.Result{RequeueAfter: retry}, nil
	}
	status := map[string]any{
		"observedGeneration": sink.Generation,
		"conditions":         ssa.Conditions(sink.Status.Conditions, []string{syncv1.ConditionReady}, want),
	}
	if err := ssa.ApplyStatus(ctx, r.client, sink, syncv1.FieldManagerNotify, status); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("recording Ready of NotificationSink %s/%s: %w", sink.Namespace, sink.Name, err)
	}
	return ctrl.Result{RequeueAfter: retry}, nil
}

// misuse says when sink is named where its type cannot serve: a webhook or
// slack sink in a Repository's spec.previews.sinkRef, a github or gitlab
// sink in an Application's spec.notifications.
func (r *sinkReconciler) misuse(ctx context.Context, sink *syncv1.NotificationSink) string {
	if receivesPreviews(sink.Spec.Type) {
		var apps syncv1.ApplicationList
		if err := r.client.List(ctx, &apps, client.InNamespace(sink.Namespace),
			client.MatchingFields{applicationSinkIndex: sink.Name}); err != nil || len(apps.Items) == 0 {
			return ""
		}
		return fmt.Sprintf("NotificationSink %s is of type %s, which receives previews only; Application %s names it in spec.notifications, which needs type webhook or slack",
			sink.Name, sink.Spec.Type, apps.Items[0].Name)
	}
	if repos := repositoriesNaming(ctx, r.client, sink.Namespace, sink.Name); len(repos) > 0 {
		return fmt.Sprintf("NotificationSink %s is of type %s; Repository %s names it in spec.previews.sinkRef, which needs type github or gitlab",
			sink.Name, sink.Spec.Type, repos[0].Name)
	}
	return ""
}

// setup watches sinks, and the Applications and Repositories that name
// them, so Ready follows how a sink is used.
func (r *sinkReconciler) setup(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).WithOptions(manager.ControllerOptions()).
		Named("notificationsink").
		For(&syncv1.NotificationSink{}).
		Watches(&syncv1.Application{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
			var reqs []reconcile.Request
			for _, n := range obj.(*syncv1.Application).Spec.Notifications {
				reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: n.SinkRef.Name}})
			}
			return reqs
		})).
		Watches(&syncv1.Repository{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
			if p := obj.(*syncv1.Repository).Spec.Previews; p != nil && p.SinkRef != nil {
				return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: p.SinkRef.Name}}}
			}
			return nil
		})).
		Complete(r)
}
