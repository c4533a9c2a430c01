package revision

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/memory"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/metrics"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/planner"
)

// defaultHistoryLimit is spec.history.limit when unset.
const defaultHistoryLimit = 10

// rollout is the scope of one reconcile: the Application, the Revision it
// works on and the service account acting for it. Phases change the two
// statuses in place; record writes the parts the sync-controller owns.
type rollout struct {
	// Scope holds the Application, the desired Revision (nil when there is
	// none yet), the client acting as the service account that plans and
	// applies, the Revision's desired state, read once per reconcile, and
	// what this reconcile's plan found: the objects an apply would leave
	// exactly as they are (Noops), which the waves applied in the same
	// reconcile do not apply again, as Flux skips unchanged objects, and,
	// once every object is planned, for a manual Application, the live
	// state of those with hand-edited fields its rollout takes back.
	planner.Scope

	// awaitingHealth is set by a pass that waits for applied objects to
	// become Healthy: their watch events then wake the Application.
	awaitingHealth bool

	// blocked keeps the rollout from starting: a refused service account.
	blocked *planner.Failure

	// rollback is the recorded rollback request that rev is the target of
	// and that no attempt has acted on yet; it is the attempt's approval.
	rollback *syncv1.ApprovalRecord

	// observed holds the objects applied or read for health in this
	// reconcile, so a health check right after an apply uses what the API
	// server answered instead of reading each object again.
	observed map[planner.ObjectID]*unstructured.Unstructured

	// writtenApp and writtenRev are the owned statuses last read or written,
	// so record writes only what changed.
	writtenApp *syncv1.ApplicationStatus
	writtenRev *syncv1.RevisionStatus

	// drift is why live state that drifted cannot be corrected.
	drift *planner.Failure
	// handEdits names, per object, the hand-edited fields this reconcile
	// took back, or planned to, and from whom, for the record of the drift
	// it corrects.
	handEdits []string

	// completed is set when this reconcile completed an attempt.
	completed bool

	// unrecorded keeps a new Application's status unwritten while it waits
	// for its first render (awaitFirstRender).
	unrecorded bool

	// events wait for the status that explains them to be recorded.
	events []lifecycleEvent
}

func newRollout(app *syncv1.Application) *rollout {
	return &rollout{Scope: planner.Scope{App: app, Now: metav1.Now()}, writtenApp: ownedApplicationStatus(app)}
}

// key names the Application.
func (ro *rollout) key() types.NamespacedName {
	return types.NamespacedName{Namespace: ro.App.Namespace, Name: ro.App.Name}
}

// attempt names the attempt under way at the Revision.
func (ro *rollout) attempt() memory.Attempt {
	return memory.Attempt{Revision: ro.Rev.Name, Number: ro.Rev.Status.Attempt}
}

func (ro *rollout) setRevision(rev *syncv1.Revision) {
	ro.Rev = rev
	ro.writtenRev = ownedRevisionStatus(rev)
}

// historyLimit is spec.history.limit, defaulted and bounded.
func (ro *rollout) historyLimit() int {
	limit := int(ro.App.Spec.History.Limit)
	switch {
	case limit <= 0:
		return defaultHistoryLimit
	case limit > syncv1.MaxHistoryLimit:
		return syncv1.MaxHistoryLimit
	default:
		return limit
	}
}

// currentAttempt reports whether the newest history entry is an attempt at
// the desired Revision.
func (ro *rollout) currentAttempt() bool {
	h := ro.App.Status.History
	return ro.Rev != nil && len(h) > 0 && h[0].Revision == ro.Rev.Name
}

// rolling reports whether an attempt at the desired Revision is under way.
func (ro *rollout) rolling() bool {
	return ro.currentAttempt() && ro.Rev.Status.Phase == syncv1.PhaseApplying
}

// settled reports whether the latest attempt at the desired Revision has
// ended, Healthy or Failed.
func (ro *rollout) settled() bool {
	if !ro.currentAttempt() {
		return false
	}
	switch ro.Rev.Status.Phase {
	case syncv1.PhaseHealthy, syncv1.PhaseFailed, syncv1.PhaseRolledBack:
		return true
	}
	return false
}

// beforeRollout reports whether the desired Revision still has to be
// planned, approved or started: no attempt at it is under way or settled.
func (ro *rollout) beforeRollout() bool {
	return ro.Rev != nil && !ro.rolling() && !ro.settled()
}

// hookStatus is the status entry of a hook in this attempt, nil if none.
func (ro *rollout) hookStatus(obj *unstructured.Unstructured) *syncv1.HookStatus {
	if ro.Rev.Status.Hooks == nil {
		return nil
	}
	id := planner.IDOf(obj)
	for i := range ro.Rev.Status.Hooks.Items {
		if planner.IDOfRef(ro.Rev.Status.Hooks.Items[i].ObjectRef) == id {
			return &ro.Rev.Status.Hooks.Items[i]
		}
	}
	return nil
}

// waveStatus is the status entry of wave w in this attempt, nil if none.
func (ro *rollout) waveStatus(w int32) *syncv1.WaveStatus {
	for i := range ro.Rev.Status.Waves {
		if ro.Rev.Status.Waves[i].Wave == w {
			return &ro.Rev.Status.Waves[i]
		}
	}
	return nil
}

// addInventory records objs as applied by this attempt; it reports whether
// the inventory grew.
func (ro *rollout) addInventory(objs ...*unstructured.Unstructured) bool {
	if ro.Rev.Status.Inventory == nil {
		ro.Rev.Status.Inventory = &syncv1.Inventory{}
	}
	have := make(map[string]bool, len(ro.Rev.Status.Inventory.Entries))
	for _, e := range ro.Rev.Status.Inventory.Entries {
		have[e] = true
	}
	grew := false
	for _, obj := range objs {
		if e := planner.InventoryEntry(obj); !have[e] {
			have[e] = true
			ro.Rev.Status.Inventory.Entries = append(ro.Rev.Status.Inventory.Entries, e)
			grew = true
		}
	}
	return grew
}

// pruned reports whether this attempt's prune step has run.
func (ro *rollout) pruned() bool {
	c := meta.FindStatusCondition(ro.Rev.Status.Conditions, syncv1.ConditionRolloutComplete)
	return c != nil && (c.Reason == syncv1.ReasonPruned || c.Reason == syncv1.ReasonPruneSkipped)
}

// metricsState labels the metrics with the Application's state.
func (ro *rollout) metricsState() metrics.State {
	return metrics.State{
		Namespace: ro.App.Namespace,
		Sync:      string(ro.App.Status.Sync),
		Health:    string(ro.App.Status.Health),
		Phase:     string(ro.App.Status.Phase),
	}
}

// step is what a phase tells the reconcile loop: go on to the next phase,
// or stop this pass, looking again after requeueAfter if it is set.
type step struct {
	next         bool
	requeueAfter time.Duration
}

var (
	proceed = step{next: true}
	halt    = step{}
)

func waitFor(d time.Duration) step { return step{requeueAfter: d} }

// lifecycleEvent is a lifecycle Event about the Application, emitted once the status
// that explains it is recorded, so it fires once per transition.
type lifecycleEvent struct {
	eventType, reason, action, message string
}
