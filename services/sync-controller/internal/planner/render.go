package planner

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// RenderFailure is the failure a Revision without a desired state records,
// from its Rendered condition; nil for a rendered Revision.
func RenderFailure(rev *syncv1.Revision) *Failure {
	if rev.Spec.DesiredState.SecretName != "" {
		return nil
	}
	f := &Failure{Reason: syncv1.ReasonRenderFailed, Message: fmt.Sprintf("Revision %s failed to render", rev.Name)}
	if c := meta.FindStatusCondition(rev.Status.Conditions, syncv1.ConditionRendered); c != nil && c.Status == metav1.ConditionFalse {
		f.Reason = c.Reason
		f.Message = fmt.Sprintf("Revision %s failed to render: %s", rev.Name, c.Message)
	}
	return f
}
