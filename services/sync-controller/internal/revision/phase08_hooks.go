package revision

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/ssa"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/health"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/hook"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/planner"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/wave"
)

// runHooks runs the hooks of one stage, a wave of hooks at a time, and
// proceeds once all have succeeded; it is phase 8 for pre-sync hooks and
// phase 11 for post-sync ones. A hook's state lives in status.hooks:
// Pending hooks are created (or, if this attempt already created them
// before a restart, adopted) and become Running with their UID; Running
// hooks are watched until they succeed or fail. A Succeeded hook is never
// looked at again, so it never runs twice in an attempt, even once its
// ttlSecondsAfterFinished has deleted it. A Running hook that disappears, or
// is replaced by another object, fails the Revision.
func (r *Reconciler) runHooks(stage hook.Stage) func(context.Context, *rollout) (step, error) {
	return func(ctx context.Context, ro *rollout) (step, error) {
		if !ro.rolling() {
			return proceed, nil
		}
		ds, err := r.plans().LoadDesired(ctx, &ro.Scope)
		if err != nil {
			return halt, err
		}
		for _, group := range hookWaves(ds.Hooks(stage)) {
			done, err := r.runHookGroup(ctx, ro, stage, group)
			switch {
			case err != nil:
				return halt, err
			case !ro.rolling():
				// A hook of the group failed the rollout.
				return proceed, nil
			case !done:
				return waitFor(pollInterval), nil
			}
		}
		return proceed, nil
	}
}

// runHookGroup advances every hook of one wave; done is true once all
// succeeded. A hook that failed fails the rollout. The end of a hook is
// checkpointed before its finalizer is removed, so a TTL can delete it from
// then on.
func (r *Reconciler) runHookGroup(ctx context.Context, ro *rollout, stage hook.Stage, hooks []*unstructured.Unstructured) (bool, error) {
	done := true
	var finished []*unstructured.Unstructured
	var failed *planner.Failure
	for _, obj := range hooks {
		st := ro.hookStatus(obj)
		if st == nil {
			return false, fmt.Errorf("%s hook %s has no entry in status.hooks of attempt %d", stage, planner.IDOf(obj), ro.Rev.Status.Attempt)
		}
		live, err := r.advanceHook(ctx, ro, stage, obj, st)
		f, isFailure := planner.AsFailure(err)
		if err != nil && !isFailure {
			return false, err
		}
		if live != nil && controllerutil.ContainsFinalizer(live, syncv1.HookFinalizer) {
			finished = append(finished, live)
		}
		if isFailure {
			failed = f
			break
		}
		if st.State != syncv1.HookSucceeded {
			done = false
		}
	}
	if failed != nil {
		ro.fail(inRollout, failed)
	}
	if len(finished) > 0 {
		if err := r.checkpoint(ctx, ro); err != nil {
			return false, err
		}
		for _, live := range finished {
			if err := releaseHook(ctx, ro.Client, live); err != nil {
				return false, err
			}
		}
	}
	return done && failed == nil, nil
}

// advanceHook moves one hook on from the state status.hooks records. It
// returns the live object of a hook that has ended, for its finalizer to
// be released, and a failure when the hook failed.
func (r *Reconciler) advanceHook(ctx context.Context, ro *rollout, stage hook.Stage, obj *unstructured.Unstructured, st *syncv1.HookStatus) (*unstructured.Unstructured, error) {
	hookFailed := func(format string, args ...any) *planner.Failure {
		st.State = syncv1.HookFailed
		st.Message = ssa.Truncate(fmt.Sprintf(format, args...))
		return &planner.Failure{Reason: syncv1.ReasonHookFailed, Message: fmt.Sprintf("%s hook %s: %s", stage, planner.IDOf(obj), st.Message)}
	}
	if st.State == syncv1.HookFailed {
		return nil, hookFailed("%s", st.Message)
	}
	live, err := planner.GetLive(ctx, ro.Client, obj)
	if err != nil {
		if f, ok := planner.AsFailure(err); ok {
			// A hook is never failed for a read it was refused: whether it
			// runs is unknown (even Pending may be one this attempt created
			// before a restart), and the retried attempt would run it again.
			// A restarted API server refuses requests until its authorizer
			// has caught up, so the refusal is retried like any transient
			// error, and shown on the hook meanwhile.
			st.Message = ssa.Truncate("cannot read it, retrying: " + f.Message)
			return nil, fmt.Errorf("reading %s hook %s: %s", stage, planner.IDOf(obj), f.Message)
		}
		return nil, err
	}
	switch st.State {
	case syncv1.HookSucceeded:
		// Never run again; only a finalizer left by a restart is released.
		if live == nil || string(live.GetUID()) != st.UID {
			return nil, nil
		}
		return live, nil
	case syncv1.HookPending:
		if live == nil {
			// The previous attempt's object was deleted when this one
			// started, so whatever exists now this attempt created, once
			// the attempt is on record.
			if err := r.recordAttempt(ctx, ro); err != nil {
				return nil, err
			}
			if live, err = planner.ApplyObject(ctx, ro.Client, withHookFinalizer(obj), false, false, syncv1.ReasonHookFailed); err != nil {
				if f, ok := planner.AsFailure(err); ok {
					return nil, hookFailed("could not be created: %s", f.Message)
				}
				return nil, err
			}
			ro.normal(syncv1.ReasonProgressing, actionHook, "created %s hook %s for Revision %s attempt %d",
				stage, planner.IDOf(obj), ro.Rev.Name, ro.Rev.Status.Attempt)
		}
		st.UID = string(live.GetUID())
		st.State = syncv1.HookRunning
		st.Message = ""
		ro.addInventory(obj)
		return nil, nil
	}
	// Running.
	if live == nil || string(live.GetUID()) != st.UID {
		return nil, hookFailed("deleted while running")
	}
	res := health.Hook(live)
	st.Message = ssa.Truncate(res.Message)
	switch {
	case res.State == syncv1.HookSucceeded:
		st.State = syncv1.HookSucceeded
		return live, nil
	case res.State == syncv1.HookFailed:
		return live, hookFailed("%s", res.Message)
	case live.GetDeletionTimestamp() != nil:
		return live, hookFailed("deleted while running")
	}
	return nil, nil
}

// hookWaves splits hooks, already in apply order, into runs of one sync wave.
func hookWaves(hooks []*unstructured.Unstructured) [][]*unstructured.Unstructured {
	var groups [][]*unstructured.Unstructured
	last := int32(0)
	for i, obj := range hooks {
		w, _ := wave.Wave(obj)
		if i == 0 || w != last {
			groups = append(groups, nil)
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], obj)
		last = w
	}
	return groups
}
