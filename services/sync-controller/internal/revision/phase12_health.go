package revision

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/planner"
)

// assessHealth completes an attempt whose every group is done, once all
// wave objects are Healthy together, and afterwards keeps the health of a
// settled Revision's objects current. Hooks count for the rollout, never
// for the Application's health.
func (r *Reconciler) assessHealth(ctx context.Context, ro *rollout) (step, error) {
	switch {
	case ro.rolling():
		return r.completeRollout(ctx, ro)
	case ro.settled():
		return r.checkHealth(ctx, ro)
	}
	return proceed, nil
}

func (r *Reconciler) completeRollout(ctx context.Context, ro *rollout) (step, error) {
	ds, err := r.plans().LoadDesired(ctx, &ro.Scope)
	if err != nil {
		return halt, err
	}
	r.expectHealth(ro, ds.WaveObjects())
	state, culprit, err := r.healthOf(ctx, ro, ds.WaveObjects())
	if err != nil {
		return halt, err
	}
	switch state {
	case syncv1.HealthHealthy:
	case syncv1.HealthDegraded:
		ro.fail(inRollout, &planner.Failure{Reason: syncv1.ReasonHealthFailure, Message: culprit})
		return proceed, nil
	default:
		ro.setRevCondition(syncv1.ConditionRolloutComplete, metav1.ConditionFalse, syncv1.ReasonProgressing,
			fmt.Sprintf("attempt %d: waiting for %s", ro.Rev.Status.Attempt, culprit))
		return r.awaitHealth(ro, ds.WaveObjects()), nil
	}
	st := &ro.Rev.Status
	st.Phase = syncv1.PhaseHealthy
	st.Health = syncv1.HealthHealthy
	ro.setRevCondition(syncv1.ConditionRolloutComplete, metav1.ConditionTrue, syncv1.ReasonSucceeded,
		fmt.Sprintf("attempt %d: every group is Healthy", st.Attempt))
	ro.setRevCondition(syncv1.ConditionHealthy, metav1.ConditionTrue, syncv1.ReasonSucceeded, "every applied object is Healthy")
	ro.finishHistory(syncv1.PhaseHealthy, syncv1.ReasonSucceeded)
	ro.deployed()
	// The outcome is a routine rollout's one Event (DESIGN.md section 4), so
	// it says what the attempt did.
	did := "no plan recorded"
	if st.Plan != nil {
		did = planner.Summary(st.Plan)
	}
	ro.normal(syncv1.ReasonSucceeded, actionRollout, "Revision %s rolled out (attempt %d: %s) and is Healthy",
		ro.Rev.Name, st.Attempt, did)
	ro.completed = true
	return proceed, nil
}

// deployed shows the Healthy Revision as the Application's deployed and
// last known good one.
func (ro *rollout) deployed() {
	app := &ro.App.Status
	app.DeployedRevision = ro.Rev.Name
	app.LastKnownGoodRevision = ro.Rev.Name
	app.Health = syncv1.HealthHealthy
	app.Sync = syncv1.SyncStateSynced
}

// checkHealth re-reads the objects of the settled Revision's inventory.
func (r *Reconciler) checkHealth(ctx context.Context, ro *rollout) (step, error) {
	if err := r.releaseFinishedHooks(ctx, ro); err != nil {
		return halt, err
	}
	if ro.Rev.Status.Inventory == nil {
		return proceed, nil
	}
	ds, err := r.plans().LoadDesired(ctx, &ro.Scope)
	if err != nil {
		return halt, err
	}
	// The desired objects stand in for their entries: whether a Service's
	// health follows from its metadata depends on its spec.
	inInventory := make(map[string]bool, len(ro.Rev.Status.Inventory.Entries))
	for _, e := range ro.Rev.Status.Inventory.Entries {
		inInventory[e] = true
	}
	var objs []*unstructured.Unstructured
	for _, obj := range ds.WaveObjects() {
		if inInventory[planner.InventoryEntry(obj)] {
			objs = append(objs, obj)
		}
	}
	state, culprit, err := r.healthOf(ctx, ro, objs)
	if err != nil {
		return halt, err
	}
	before := ro.App.Status.Health
	ro.Rev.Status.Health = state
	ro.App.Status.Health = state
	if state == syncv1.HealthHealthy {
		ro.setRevCondition(syncv1.ConditionHealthy, metav1.ConditionTrue, syncv1.ReasonSucceeded, "every applied object is Healthy")
		return proceed, nil
	}
	reason := syncv1.ReasonProgressing
	if state == syncv1.HealthDegraded || state == syncv1.HealthMissing {
		reason = syncv1.ReasonHealthFailure
	}
	ro.setRevCondition(syncv1.ConditionHealthy, metav1.ConditionFalse, reason, culprit)
	if reason == syncv1.ReasonHealthFailure && before != state {
		ro.warning(syncv1.ReasonHealthFailure, actionAssess, "Revision %s is %s: %s", ro.Rev.Name, state, culprit)
	}
	return proceed, nil
}
