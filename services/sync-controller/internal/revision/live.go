package revision

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/health"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/planner"
)

// observe records live as the state of its object in this reconcile.
func (ro *rollout) observe(live *unstructured.Unstructured) {
	if ro.observed == nil {
		ro.observed = map[planner.ObjectID]*unstructured.Unstructured{}
	}
	ro.observed[planner.IDOf(live)] = live
}

// current is obj's live state as applied or read earlier in this reconcile,
// else as read now; nil when it does not exist. A reconcile spans at most
// one pass over the groups, so what it saw is current enough to judge
// health; the next reconcile reads afresh.
func (ro *rollout) current(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if live, ok := ro.observed[planner.IDOf(obj)]; ok {
		return live, nil
	}
	live, err := planner.GetLive(ctx, ro.Client, obj)
	if err == nil && live != nil {
		ro.observe(live)
	}
	return live, err
}

// healthOf reads objs as the service account and returns their aggregate
// health and, unless Healthy, the first object that keeps it from being so.
func (r *Reconciler) healthOf(ctx context.Context, ro *rollout, objs []*unstructured.Unstructured) (syncv1.HealthState, string, error) {
	worst := syncv1.HealthHealthy
	culprit := ""
	for _, obj := range objs {
		live, err := r.liveForHealth(ctx, ro, obj)
		if err != nil {
			if f, ok := planner.AsFailure(err); ok {
				return syncv1.HealthUnknown, f.Message, nil
			}
			return "", "", err
		}
		res := health.Of(live)
		if next := health.Aggregate(worst, res.State); next != worst {
			worst = next
			culprit = fmt.Sprintf("%s is %s: %s", planner.IDOf(obj), res.State, res.Message)
		}
	}
	return worst, culprit, nil
}

// awaitHealth waits for objs to become Healthy: their watch events wake the
// Application, with healthFallback as a backstop, or, while any of their
// kinds is not watched, it looks again after pollInterval.
func (r *Reconciler) awaitHealth(ro *rollout, objs []*unstructured.Unstructured) step {
	if r.watches == nil {
		return waitFor(pollInterval)
	}
	ro.awaitingHealth = true
	r.watches.AwaitHealth(ro.key(), true)
	for _, obj := range objs {
		if !r.watches.Watched(obj.GroupVersionKind().GroupKind()) {
			return waitFor(pollInterval)
		}
	}
	return waitFor(healthFallback)
}

// expectHealth has the watches wake the Application on any change to objs
// from now on, before their health is read (memory.DriftWatches.Expect).
// A pass that ends Healthy stops waiting (run).
func (r *Reconciler) expectHealth(ro *rollout, objs []*unstructured.Unstructured) {
	if r.watches == nil {
		return
	}
	ids := make([]planner.ObjectID, len(objs))
	for i, obj := range objs {
		ids[i] = planner.IDOf(obj)
	}
	r.watches.Expect(ro.key(), ids)
}

// liveForHealth is obj as its health is assessed: the metadata the drift
// watch keeps, for a watched kind whose health follows from its metadata,
// and otherwise the live object read as the service account. Reading those
// objects live on each look was half the requests of rollouts waiting for
// health (docs/benchmarks.md). An object not in the watch cache yet is read
// live, so a fresh apply is never taken for a missing object.
func (r *Reconciler) liveForHealth(ctx context.Context, ro *rollout, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if live, ok := ro.observed[planner.IDOf(obj)]; ok {
		return live, nil
	}
	if health.FromMetadata(obj) && r.watches != nil {
		if cached, ok := r.watches.CachedMetadata(ctx, obj); ok {
			return cached, nil
		}
	}
	return ro.current(ctx, obj)
}
