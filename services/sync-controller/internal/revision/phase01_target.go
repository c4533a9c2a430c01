package revision

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/planner"
)

// firstRenderGrace is how long a new Application waits for its first
// desired Revision before its status says it is waiting for one. The
// source-controller usually renders it well within this time, and recording
// the wait first was one of every new Application's status writes
// (docs/benchmarks.md).
const firstRenderGrace = 10 * time.Second

// resolveTarget reads the Revision this reconcile works on (see target)
// and stops the pass while there is none.
func (r *Reconciler) resolveTarget(ctx context.Context, ro *rollout) (step, error) {
	name, err := r.target(ctx, ro)
	if err != nil {
		return halt, err
	}
	if name == "" {
		return ro.awaitFirstRender(), nil
	}
	var rev *syncv1.Revision
	if name == ro.App.Status.DesiredRevision {
		rev, err = r.readDesiredRevision(ctx, ro.App, name)
	} else {
		rev, err = r.readRevision(ctx, ro.App.Namespace, name)
	}
	if err != nil {
		if apierrors.IsNotFound(err) {
			// The Revision watch brings the Application back once it exists.
			r.log(ctx).Info("desired Revision not found yet", "revision", name)
			return ro.awaitFirstRender(), nil
		}
		return halt, fmt.Errorf("reading desired Revision %s/%s: %w", ro.App.Namespace, name, err)
	}
	if !rev.BelongsTo(client.ObjectKeyFromObject(ro.App)) {
		return halt, fmt.Errorf("Revision %s/%s belongs to Application %q, not %q",
			rev.Namespace, rev.Name, rev.Spec.ApplicationName, ro.App.Name)
	}
	ro.setRevision(rev)
	ro.catchUp()
	if f := planner.RenderFailure(rev); f != nil {
		ro.fail(atRender, f)
		return halt, nil
	}
	return proceed, nil
}

// awaitFirstRender stops a pass that has no Revision to work on. A new
// Application with no status yet is left unrecorded until firstRenderGrace
// after its creation, and looked at again then; its first render wakes it
// sooner.
func (ro *rollout) awaitFirstRender() step {
	wait := ro.firstRenderWait()
	if wait <= 0 {
		return halt
	}
	ro.unrecorded = true
	return waitFor(wait)
}

// firstRenderWait is how much longer the Application's status may stay
// unwritten: none once it has a condition of its own or of the
// source-controller, or once firstRenderGrace has passed since its creation.
func (ro *rollout) firstRenderWait() time.Duration {
	for _, typ := range []string{syncv1.ConditionReady, syncv1.ConditionSynced, syncv1.ConditionRendered} {
		if meta.FindStatusCondition(ro.App.Status.Conditions, typ) != nil {
			return 0
		}
	}
	return ro.App.CreationTimestamp.Add(firstRenderGrace).Sub(ro.Now.Time)
}

// target names the Revision this reconcile works on: the desired one, or
// the target of a rollback request. A rollback request the webhook recorded
// is acted on once, as its own approval, while the target's desired state is
// the one recorded with it; the Revision rolled back from is then held (not
// applied again) until a newer desired state arrives, which releases the
// hold and is rolled out as usual.
func (r *Reconciler) target(ctx context.Context, ro *rollout) (string, error) {
	desired := ro.App.Status.DesiredRevision
	req, err := r.rollbackRequest(ctx, ro)
	if err != nil || req == nil {
		return desired, err
	}
	if !req.consumed {
		ro.rollback = &req.record
		return req.record.Revision, nil
	}
	held := ro.App.Status.HeldRevision
	if held == "" && !recordsAttempt(ro.App, req.target) {
		// The rollback began but the Application does not show it yet.
		held = heldByRollback(req.target)
		ro.App.Status.HeldRevision = held
	}
	if held == "" {
		return desired, nil
	}
	if desired != held {
		ro.App.Status.HeldRevision = ""
		ro.normal(syncv1.ReasonProgressing, actionRollout, "Revision %s is no longer held: a newer desired state, Revision %s, arrived", held, desired)
		return desired, nil
	}
	return req.record.Revision, nil
}

// rollbackRequest is the recorded rollback request of the Application, if
// it names one of its Revisions whose desired state is still the recorded
// one, and whether an attempt already acted on it.
type rollbackRequest struct {
	record   syncv1.ApprovalRecord
	consumed bool
	// target is the Revision rolled back to.
	target *syncv1.Revision
}

func (r *Reconciler) rollbackRequest(ctx context.Context, ro *rollout) (*rollbackRequest, error) {
	a := ro.App.Annotations
	name := a[syncv1.RollbackRequestedAnnotation]
	if name == "" {
		return nil, nil
	}
	at, err := time.Parse(time.RFC3339, a[syncv1.RollbackRequestedAtAnnotation])
	if err != nil {
		r.log(ctx).Info("ignoring a rollback request the webhook did not record", "revision", name)
		return nil, nil
	}
	rev, err := r.readRevision(ctx, ro.App.Namespace, name)
	if err != nil {
		if apierrors.IsNotFound(err) {
			r.log(ctx).Info("rollback target not found", "revision", name)
			return nil, nil
		}
		return nil, fmt.Errorf("reading rollback target Revision %s/%s: %w", ro.App.Namespace, name, err)
	}
	digest := a[syncv1.RollbackDesiredStateAnnotation]
	if !rev.BelongsTo(client.ObjectKeyFromObject(ro.App)) || rev.Spec.DesiredState.Digest != digest {
		return nil, nil
	}
	record := syncv1.ApprovalRecord{
		Revision: name, By: a[syncv1.RollbackRequestedByAnnotation], At: metav1.NewTime(at), Digest: digest, Rollback: true,
		RequestID: a[syncv1.RollbackRequestIDAnnotation],
	}
	used := rev.Status.Approval
	consumed := used != nil && used.Rollback && used.By == record.By && used.At.Equal(&record.At) && used.RequestID == record.RequestID
	return &rollbackRequest{record: record, consumed: consumed, target: rev}, nil
}
