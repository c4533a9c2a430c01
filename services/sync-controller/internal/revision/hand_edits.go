package revision

import (
	"fmt"
	"slices"
	"strings"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/planner"
)

// recordHandEdits records the hand-edited fields of the object id that
// were taken back or, for a manual Application's plan, that its rollout
// takes back, for the drift record; what was taken gets an Event. A plan
// gets none, since a manual Application is planned again on every look
// while an approval waits: the plan itself shows it.
func (ro *rollout) recordHandEdits(id planner.ObjectID, taken []string, planned bool) {
	if len(taken) == 0 {
		return
	}
	record := fmt.Sprintf("%s: %s", id, strings.Join(taken, ", "))
	if planned && slices.Contains(ro.handEdits, record) {
		// Drift detection plans twice: once to find it, once for its plan.
		return
	}
	ro.handEdits = append(ro.handEdits, record)
	switch {
	case planned:
	case ro.App.Spec.Sync.Automatic:
		ro.normal(syncv1.ReasonDriftCorrected, actionSelfHeal, "%s was edited by hand: took back %s; the next apply rolls the edit back",
			id, strings.Join(taken, ", "))
	default:
		ro.normal(syncv1.ReasonDriftCorrected, actionSelfHeal, "%s was edited by hand: took back %s, as plan %s shows, and applied the desired state",
			id, strings.Join(taken, ", "), ro.Rev.Status.Plan.Digest)
	}
}
