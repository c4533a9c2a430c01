package planner

import (
	"fmt"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// RenderFailure is the failure a Revision without a desired state records
// in spec.renderFailure; nil for a rendered Revision.
func RenderFailure(rev *syncv1.Revision) *Failure {
	if rev.Spec.DesiredState.SecretName != "" {
		return nil
	}
	f := &Failure{Reason: syncv1.ReasonRenderFailed, Message: fmt.Sprintf("Revision %s failed to render", rev.Name)}
	if rf := rev.Spec.RenderFailure; rf != nil {
		f.Reason = rf.Reason
		f.Message = fmt.Sprintf("Revision %s failed to render: %s", rev.Name, rf.Message)
	}
	return f
}
