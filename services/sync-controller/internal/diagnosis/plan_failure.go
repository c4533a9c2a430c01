package diagnosis

import (
	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/message"
)

// OfPlanFailure explains a plan that failed before anything was applied:
// the summary gives the reason and message, and, when the failure is about
// one object, a single cause names that object with the API server's
// refusal. Nothing live is read: the refusal is the evidence.
func OfPlanFailure(reason, msg string, obj *syncv1.ObjectRef) *syncv1.Diagnosis {
	d := &syncv1.Diagnosis{Summary: message.Bound(reason+": "+msg, maxSummary)}
	if obj != nil {
		d.Causes = []syncv1.Cause{{Chain: []syncv1.CauseLink{{ObjectRef: *obj, Message: message.Bound(msg, maxLinkMessage)}}}}
	}
	return d
}
