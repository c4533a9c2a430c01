package controller

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
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
