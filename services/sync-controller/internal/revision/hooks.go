package revision

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/ssa"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/health"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/hook"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/wave"
)

// runHooks runs the hooks of one stage, a wave of hooks at a time, and
// proceeds once all have succeeded. A hook's state lives in status.hooks:
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
		ds, err := r.loadDesired(ctx, ro)
		if err != nil {
			return halt, err
		}
		for _, group := range hookWaves(ds.hooks(stage)) {
			done, f, err := r.runHookGroup(ctx, ro, stage, group)
			if errors.Is(err, errRecordedFailure) {
				return proceed, nil
			}
			if err != nil {
				return halt, err
			}
			if f != nil {
				ro.failRollout(f)
				return proceed, nil
			}
			if !done {
				return waitFor(pollInterval), nil
			}
		}
		return proceed, nil
	}
}

// runHookGroup advances every hook of one wave; done is true once all
// succeeded. The end of a hook is recorded before its finalizer is removed,
// so a TTL can delete it from then on.
func (r *Reconciler) runHookGroup(ctx context.Context, ro *rollout, stage hook.Stage, hooks []*unstructured.Unstructured) (bool, *failure, error) {
	done := true
	var finished []*unstructured.Unstructured
	var failed *failure
	for _, obj := range hooks {
		st := ro.hookStatus(obj)
		if st == nil {
			return false, nil, fmt.Errorf("%s hook %s has no entry in status.hooks of attempt %d", stage, idOf(obj), ro.rev.Status.Attempt)
		}
		f, live, err := r.advanceHook(ctx, ro, stage, obj, st)
		if err != nil {
			return false, nil, err
		}
		if live != nil && controllerutil.ContainsFinalizer(live, hookFinalizer) {
			finished = append(finished, live)
		}
		if f != nil {
			failed = f
			break
		}
		if st.State != syncv1.HookSucceeded {
			done = false
		}
	}
	if len(finished) > 0 {
		if failed != nil {
			ro.failRollout(failed)
		}
		if err := r.record(ctx, ro); err != nil {
			return false, nil, err
		}
		for _, live := range finished {
			if err := releaseHook(ctx, ro.client, live); err != nil {
				return false, nil, err
			}
		}
		if failed != nil {
			return false, nil, errRecordedFailure
		}
	}
	return done, failed, nil
}

// advanceHook moves one hook on from the state status.hooks records. It
// returns the live object of a hook that has ended, for its finalizer to
// be released.
func (r *Reconciler) advanceHook(ctx context.Context, ro *rollout, stage hook.Stage, obj *unstructured.Unstructured, st *syncv1.HookStatus) (*failure, *unstructured.Unstructured, error) {
	hookFailed := func(format string, args ...any) *failure {
		st.State = syncv1.HookFailed
		st.Message = ssa.Truncate(fmt.Sprintf(format, args...))
		return &failure{reason: syncv1.ReasonHookFailed, message: fmt.Sprintf("%s hook %s: %s", stage, idOf(obj), st.Message)}
	}
	if st.State == syncv1.HookFailed {
		return hookFailed("%s", st.Message), nil, nil
	}
	live, err := getLive(ctx, ro.client, obj)
	if err != nil {
		if f, ok := asFailure(err); ok {
			return hookFailed("%s", f.message), nil, nil
		}
		return nil, nil, err
	}
	switch st.State {
	case syncv1.HookSucceeded:
		// Never run again; only a finalizer left by a restart is released.
		if live == nil || string(live.GetUID()) != st.UID {
			return nil, nil, nil
		}
		return nil, live, nil
	case syncv1.HookPending:
		if live == nil {
			// The previous attempt's object was deleted when this one
			// started, so whatever exists now this attempt created.
			if live, err = applyObject(ctx, ro.client, withHookFinalizer(obj), false, syncv1.ReasonHookFailed); err != nil {
				if f, ok := asFailure(err); ok {
					return hookFailed("could not be created: %s", f.message), nil, nil
				}
				return nil, nil, err
			}
			ro.normal(syncv1.ReasonProgressing, actionHook, "created %s hook %s for Revision %s attempt %d",
				stage, idOf(obj), ro.rev.Name, ro.rev.Status.Attempt)
		}
		st.UID = string(live.GetUID())
		st.State = syncv1.HookRunning
		st.Message = ""
		ro.addInventory(obj)
		return nil, nil, nil
	}
	// Running.
	if live == nil || string(live.GetUID()) != st.UID {
		return hookFailed("deleted while running"), nil, nil
	}
	res := health.Hook(live)
	st.Message = ssa.Truncate(res.Message)
	switch {
	case res.State == syncv1.HookSucceeded:
		st.State = syncv1.HookSucceeded
		return nil, live, nil
	case res.State == syncv1.HookFailed:
		return hookFailed("%s", res.Message), live, nil
	case live.GetDeletionTimestamp() != nil:
		return hookFailed("deleted while running"), live, nil
	}
	return nil, nil, nil
}

// errRecordedFailure says a failure was already recorded and its hooks released.
var errRecordedFailure = errors.New("failure recorded")

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
