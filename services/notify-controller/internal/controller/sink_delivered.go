package controller

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/ssa"
)

// deliveredCondition records on a NotificationSink whether its last
// notification was delivered, so a failing sink shows in its status and
// not only in Events and a metric. It writes the Delivered condition only
// when it changes: a sink that keeps failing for the same cause, or keeps
// delivering, costs no status write per notification. It writes under its
// own field manager so that applying it never takes away the Ready the
// sink controller applies.
type deliveredCondition struct {
	client client.Client
	log    logr.Logger
}

func (d deliveredCondition) report(ctx context.Context, key types.NamespacedName, attempts int, deliveryErr error) {
	sink := &syncv1.NotificationSink{}
	if err := d.client.Get(ctx, key, sink); err != nil {
		if !apierrors.IsNotFound(err) {
			d.log.Error(err, "reading NotificationSink to record Delivered", "namespace", key.Namespace, "sink", key.Name)
		}
		return
	}
	want := ssa.Condition(syncv1.ConditionDelivered, true, syncv1.ReasonSucceeded, "the last notification was delivered", sink.Generation)
	if deliveryErr != nil {
		want = ssa.Condition(syncv1.ConditionDelivered, false, syncv1.ReasonNotificationFailed,
			fmt.Sprintf("the last notification failed after %d attempt(s): %v", attempts, deliveryErr), sink.Generation)
	}
	if sameCondition(meta.FindStatusCondition(sink.Status.Conditions, syncv1.ConditionDelivered), want) {
		return
	}
	status := map[string]any{"conditions": ssa.Conditions(sink.Status.Conditions, []string{syncv1.ConditionDelivered}, want)}
	if err := ssa.ApplyStatus(ctx, d.client, sink, syncv1.FieldManagerNotifyDelivery, status); err != nil && !apierrors.IsNotFound(err) {
		d.log.Error(err, "recording Delivered", "namespace", key.Namespace, "sink", key.Name)
	}
}
