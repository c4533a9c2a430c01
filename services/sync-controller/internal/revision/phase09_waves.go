package revision

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/desired"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/health"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/planner"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/wave"
)

// applyWaves applies the sync waves in ascending order and waits for every
// object of a wave to be Healthy before the next. A Pending wave is
// recorded Applying, its objects added to the inventory, in one checkpoint
// before it is applied, so prune knows about them even if the controller
// stops mid-apply; they are then applied in kind order. A wave found
// Applying is only watched, unless this process has not applied it
// (memory.AppliedWaves) or one of its objects has vanished.
func (r *Reconciler) applyWaves(ctx context.Context, ro *rollout) (step, error) {
	if !ro.rolling() {
		r.applied.Forget(ro.key())
		return proceed, nil
	}
	ds, err := r.plans().LoadDesired(ctx, &ro.Scope)
	if err != nil {
		return halt, err
	}
	for _, g := range ds.Groups.Waves {
		ws := ro.waveStatus(g.Wave)
		if ws == nil {
			return halt, fmt.Errorf("wave %d has no entry in status.waves of attempt %d", g.Wave, ro.Rev.Status.Attempt)
		}
		if ws.State == syncv1.WaveHealthy {
			continue
		}
		if ws.State == syncv1.WaveApplying && !r.applied.Has(ro.key(), ro.attempt(), g.Wave) {
			ws.State = syncv1.WavePending
		}
		applying := ws.State == syncv1.WavePending
		if applying {
			ro.addInventory(g.Objects...)
			ws.State = syncv1.WaveApplying
			ro.setRevCondition(syncv1.ConditionRolloutComplete, metav1.ConditionFalse, syncv1.ReasonProgressing,
				fmt.Sprintf("attempt %d: applying wave %d (%d object(s)), then waiting for it to be Healthy",
					ro.Rev.Status.Attempt, g.Wave, len(g.Objects)))
			if err := r.checkpoint(ctx, ro); err != nil {
				return halt, err
			}
			s, err := r.applyWave(ctx, ro, ds, g)
			if f, ok := planner.AsFailure(err); ok {
				ws.State = syncv1.WavePending
				ro.fail(inRollout, f)
				return proceed, nil
			}
			if err != nil || !s.next {
				return s, err
			}
			r.applied.Add(ro.key(), ro.attempt(), g.Wave)
		}
		ready, waiting, err := r.waveHealthy(ctx, ro, g)
		if f, ok := planner.AsFailure(err); ok {
			ro.fail(inRollout, f)
			return proceed, nil
		}
		if err != nil {
			return halt, err
		}
		if !ready {
			// Right after the apply the message says so; what the wave
			// waits for is recorded by the looks that follow, saving a
			// status write per wave.
			if waiting != "" && !applying {
				ro.setRevCondition(syncv1.ConditionRolloutComplete, metav1.ConditionFalse, syncv1.ReasonProgressing, waiting)
			}
			return r.awaitHealth(ro, g.Objects), nil
		}
		ws.State = syncv1.WaveHealthy
	}
	return proceed, nil
}

// applyWave server-side applies every object of a wave in kind order, the
// objects of one kind at once (planner.ObjectsAtOnce at a time), and stops after
// the first kind with an object refused, with the first such object's failure.
func (r *Reconciler) applyWave(ctx context.Context, ro *rollout, ds *desired.State, g wave.Group) (step, error) {
	for _, objs := range byKind(g.Objects) {
		applied := make([]*unstructured.Unstructured, len(objs))
		taken := make([][]string, len(objs))
		errs := planner.InParallel(len(objs), func(i int) (err error) {
			applied[i], taken[i], err = r.applyWaveObject(ctx, ro, objs[i])
			return err
		})
		for i, live := range applied {
			ro.recordHandEdits(planner.IDOf(objs[i]), taken[i], false)
			if live != nil {
				ro.observe(live)
			}
		}
		i, err := planner.FirstError(errs)
		if err == nil {
			continue
		}
		obj := objs[i]
		if errors.Is(err, planner.ErrKindNotServed) && ds.NewKinds[obj.GroupVersionKind().GroupKind()] {
			// Its CustomResourceDefinition was applied but is not served yet.
			ro.setRevCondition(syncv1.ConditionRolloutComplete, metav1.ConditionFalse, syncv1.ReasonProgressing,
				fmt.Sprintf("attempt %d: wave %d: waiting for kind %s to be served before applying %s",
					ro.Rev.Status.Attempt, g.Wave, obj.GroupVersionKind().GroupKind(), planner.IDOf(obj)))
			return waitFor(pollInterval), nil
		}
		if f, ok := planner.AsFailure(err); ok {
			return halt, &planner.Failure{Reason: f.Reason, Message: fmt.Sprintf("wave %d: %s", g.Wave, f.Message)}
		}
		return halt, err
	}
	return proceed, nil
}

// byKind splits objects, in kind order, into runs of one kind order.
func byKind(objs []*unstructured.Unstructured) [][]*unstructured.Unstructured {
	var runs [][]*unstructured.Unstructured
	for i, obj := range objs {
		if i == 0 || wave.KindOrder(obj.GroupVersionKind()) != wave.KindOrder(objs[i-1].GroupVersionKind()) {
			runs = append(runs, nil)
		}
		runs[len(runs)-1] = append(runs[len(runs)-1], obj)
	}
	return runs
}

// applyWaveObject applies one object of a wave as planned: with force if
// it asks for it, and with the fields its ignore rules name left as they are.
// A manual Application first takes back the hand-edited fields its plan
// showed taken (takeBackBeforeApply), returned for the caller to record.
// An object this reconcile's plan found unchanged is not applied: its live
// state is what the apply would return.
func (r *Reconciler) applyWaveObject(ctx context.Context, ro *rollout, obj *unstructured.Unstructured) (*unstructured.Unstructured, []string, error) {
	if live, ok := ro.Noops[planner.IDOf(obj)]; ok {
		return live, nil, nil
	}
	force, err := ro.Forced(obj)
	if err != nil {
		return nil, nil, err
	}
	obj, ignored, err := ro.RespectIgnored(ctx, obj, nil, false)
	if err != nil {
		return nil, nil, err
	}
	taken, err := r.plans().TakeBackBeforeApply(ctx, &ro.Scope, obj, ignored)
	if err != nil {
		return nil, taken, err
	}
	applied, err := planner.ApplyObject(ctx, ro.Client, obj, false, force, syncv1.ReasonApplyFailed)
	return applied, taken, err
}

// waveHealthy reads every object of a wave and reports whether all are
// Healthy and, if not, what the wave is waiting for. A Degraded object is a
// failure with HealthFailure. A vanished object sends the wave back to
// Pending, to be applied again.
func (r *Reconciler) waveHealthy(ctx context.Context, ro *rollout, g wave.Group) (bool, string, error) {
	var waiting *unstructured.Unstructured
	var waitingFor string
	for _, obj := range g.Objects {
		live, err := r.liveForHealth(ctx, ro, obj)
		if err != nil {
			if f, ok := planner.AsFailure(err); ok {
				return false, "", &planner.Failure{Reason: f.Reason, Message: fmt.Sprintf("wave %d: %s", g.Wave, f.Message)}
			}
			return false, "", err
		}
		if live == nil {
			ro.waveStatus(g.Wave).State = syncv1.WavePending
			return false, "", nil
		}
		res := health.Of(live)
		switch res.State {
		case syncv1.HealthHealthy:
		case syncv1.HealthDegraded:
			return false, "", &planner.Failure{Reason: syncv1.ReasonHealthFailure, Message: fmt.Sprintf(
				"wave %d: %s is Degraded: %s", g.Wave, planner.IDOf(obj), res.Message)}
		default:
			if waiting == nil {
				waiting, waitingFor = obj, res.Message
			}
		}
	}
	if waiting != nil {
		return false, fmt.Sprintf("attempt %d: wave %d: waiting for %s: %s", ro.Rev.Status.Attempt, g.Wave, planner.IDOf(waiting), waitingFor), nil
	}
	return true, "", nil
}
