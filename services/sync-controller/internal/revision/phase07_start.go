package revision

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/desired"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/hook"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/plan"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/planner"
)

// startRollout begins an attempt at an approved, planned Revision. It first
// deletes the hook objects an earlier rollout left (hooks run anew on every
// attempt) and waits until they are gone, so that a hook object found later
// in this attempt can only be one this attempt created. An attempt that
// follows a failed one at the same Revision resumes where it stopped: the
// hooks that succeeded keep their object and state and do not run again.
// Then it records the attempt (beginAttempt).
func (r *Reconciler) startRollout(ctx context.Context, ro *rollout) (step, error) {
	if !ro.beforeRollout() || !ro.approved() || ro.Rev.Status.Phase == syncv1.PhaseFailed {
		return proceed, nil
	}
	ds, err := r.plans().LoadDesired(ctx, &ro.Scope)
	if err != nil {
		return halt, err
	}
	hooks, gone, err := r.clearPreviousHooks(ctx, ro, ds)
	if f, ok := planner.AsFailure(err); ok {
		ro.fail(atStart, f)
		return halt, nil
	}
	if err != nil {
		return halt, err
	}
	if !gone {
		return waitFor(shortPoll), nil
	}
	ro.beginAttempt(ds, hooks)
	return proceed, nil
}

// clearPreviousHooks deletes the hook objects of ds that an earlier attempt
// left, except those of a resumed attempt that succeeded, and returns the
// attempt's hook statuses and whether every hook object to run is gone.
// A hook it may not delete is a failure.
func (r *Reconciler) clearPreviousHooks(ctx context.Context, ro *rollout, ds *desired.State) ([]syncv1.HookStatus, bool, error) {
	var hooks []syncv1.HookStatus
	gone := true
	resuming := ro.resumesFailedAttempt()
	for _, stage := range planner.HookStages {
		for _, obj := range ds.Hooks(stage) {
			if prev := ro.hookStatus(obj); resuming && prev != nil && prev.State == syncv1.HookSucceeded {
				hooks = append(hooks, *prev)
				continue
			}
			hooks = append(hooks, syncv1.HookStatus{ObjectRef: plan.RefOf(obj), Stage: string(stage), State: syncv1.HookPending})
			deleted, err := r.clearPreviousHook(ctx, ro, stage, obj)
			if err != nil {
				return nil, false, err
			}
			gone = gone && deleted
		}
	}
	return hooks, gone, nil
}

// clearPreviousHook deletes the live object of hook obj, if there is one,
// and reports whether it was gone already.
func (r *Reconciler) clearPreviousHook(ctx context.Context, ro *rollout, stage hook.Stage, obj *unstructured.Unstructured) (bool, error) {
	live, err := planner.GetLive(ctx, ro.Client, obj)
	if err != nil || live == nil {
		return err == nil, err
	}
	if owner := ro.OwnedByAnother(live); owner != "" {
		return false, &planner.Failure{Reason: syncv1.ReasonApplyConflict, Message: fmt.Sprintf(
			"%s hook %s belongs to Application %s (annotation %s); an object is managed by one Application only",
			stage, planner.IDOf(obj), owner, syncv1.OwnedByAnnotation)}
	}
	if !planner.ManagedBySync(live) {
		return false, &planner.Failure{Reason: syncv1.ReasonHookFailed, Message: fmt.Sprintf(
			"%s hook %s: an object of that name exists that Kuvryn Sync did not create; a hook must be created by the rollout",
			stage, planner.IDOf(obj))}
	}
	if live.GetDeletionTimestamp() != nil {
		return false, releaseHook(ctx, ro.Client, live)
	}
	if err := deleteObject(ctx, ro.Client, live); err != nil {
		if f, ok := planner.AsFailure(planner.FailureOf(obj, "delete previous hook", err, syncv1.ReasonHookFailed)); ok {
			return false, f
		}
		return false, fmt.Errorf("deleting previous hook %s: %w", planner.IDOf(obj), err)
	}
	return false, nil
}

// beginAttempt records a new attempt at the Revision: its approval (the
// rollback request, or the manual approval), its start, every hook in
// hooks, every wave Pending, an empty inventory, and a new history entry.
// It sends no Event: a routine rollout's one Event is its outcome.
func (ro *rollout) beginAttempt(ds *desired.State, hooks []syncv1.HookStatus) {
	st := &ro.Rev.Status
	st.Attempt++
	st.Phase = syncv1.PhaseApplying
	st.Approval = nil
	switch {
	case ro.rollback != nil:
		st.Approval = ro.rollback
		ro.holdForRollback()
	case !ro.App.Spec.Sync.Automatic:
		st.Approval = ro.approvalRequest()
	}
	st.Hooks = nil
	if len(hooks) > 0 {
		st.Hooks = &syncv1.HookList{Items: hooks}
	}
	st.Waves = nil
	for _, g := range ds.Groups.Waves {
		st.Waves = append(st.Waves, syncv1.WaveStatus{Wave: g.Wave, State: syncv1.WavePending, Objects: int32(len(g.Objects))})
	}
	st.Inventory = nil
	st.Health = syncv1.HealthProgressing
	meta.RemoveStatusCondition(&st.Conditions, syncv1.ConditionHealthy)
	ro.setRevCondition(syncv1.ConditionRolloutComplete, metav1.ConditionFalse, syncv1.ReasonProgressing,
		fmt.Sprintf("attempt %d: %d pre-sync hook(s), %d wave(s), prune, %d post-sync hook(s)",
			st.Attempt, len(ds.Groups.PreSync), len(ds.Groups.Waves), len(ds.Groups.PostSync)))
	st.StartedAt = ro.Now.DeepCopy()
	ro.startHistory()
	ro.App.Status.Health = syncv1.HealthProgressing
}

// holdForRollback holds the Revision rolled back from, so that it is not
// deployed again until a newer desired state, and says so in an Event.
func (ro *rollout) holdForRollback() {
	from := ro.App.Status.RollbackHold(ro.Rev.Name)
	ro.App.Status.HeldRevision = from
	ro.Rev.Status.Approval.Holds = from
	if from == "" {
		ro.normal(syncv1.ReasonRolledBack, actionRollout, "rolling back to Revision %s as %s requested", ro.Rev.Name, ro.rollback.By)
	} else {
		ro.normal(syncv1.ReasonRolledBack, actionRollout, "rolling back to Revision %s as %s requested; holding Revision %s until a newer desired state",
			ro.Rev.Name, ro.rollback.By, from)
	}
}

// resumesFailedAttempt reports whether the attempt about to start follows a
// failed attempt at the same Revision.
func (ro *rollout) resumesFailedAttempt() bool {
	h := ro.App.Status.History
	return len(h) > 0 && h[0].Revision == ro.Rev.Name && h[0].Result == syncv1.PhaseFailed
}
