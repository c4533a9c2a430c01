package revision

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kuvryn/kuvryn-sync/pkg/message"
)

// Actions of lifecycle Events: what the controller was doing.
const (
	actionPlan     = "Plan"
	actionApprove  = "Approve"
	actionRollout  = "Rollout"
	actionHook     = "RunHook"
	actionPrune    = "Prune"
	actionAssess   = "AssessHealth"
	actionSelfHeal = "CorrectDrift"
)

func (ro *rollout) normal(reason, action, format string, args ...any) {
	ro.events = append(ro.events, lifecycleEvent{corev1.EventTypeNormal, reason, action, fmt.Sprintf(format, args...)})
}

func (ro *rollout) warning(reason, action, format string, args ...any) {
	ro.events = append(ro.events, lifecycleEvent{corev1.EventTypeWarning, reason, action, fmt.Sprintf(format, args...)})
}

// maxEventNoteBytes is the longest note the events API accepts.
const maxEventNoteBytes = 1024

// emit sends the pending Events about the Application, related to the
// desired Revision; the recorder counts them by the Application's state.
func (r *Reconciler) emit(ro *rollout) {
	var related runtime.Object
	if ro.Rev != nil {
		related = ro.Rev
	}
	for _, e := range ro.events {
		r.Recorder.Eventf(ro.App, related, e.eventType, e.reason, e.action, "%s", message.Bound(e.message, maxEventNoteBytes))
	}
	ro.events = nil
}
