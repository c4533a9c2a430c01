package revision

import (
	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/ssa"
)

// Condition types the sync-controller owns. On an Application, Rendered
// belongs to the source-controller and NotificationsReady to the
// notify-controller; a Revision's status is the sync-controller's alone.
var (
	applicationConditions = []string{
		syncv1.ConditionReady, syncv1.ConditionSynced, syncv1.ConditionHealthy,
		syncv1.ConditionAwaitingApproval, syncv1.ConditionApproved,
	}
	revisionConditions = []string{
		syncv1.ConditionRendered, syncv1.ConditionPlanned, syncv1.ConditionAwaitingApproval, syncv1.ConditionApproved,
		syncv1.ConditionRolloutComplete, syncv1.ConditionHealthy,
	}
)

// ownedApplicationStatus is the part of app's status the sync-controller
// applies: everything but desiredRevision, sourceCommit and other
// controllers' conditions, which Server-Side Apply would otherwise take over.
func ownedApplicationStatus(app *syncv1.Application) *syncv1.ApplicationStatus {
	s := app.Status.DeepCopy()
	s.DesiredRevision = ""
	s.SourceCommit = ""
	s.Conditions = ssa.Conditions(s.Conditions, applicationConditions)
	return s
}

// ownedRevisionStatus is the part of rev's status the sync-controller
// applies: all of it but conditions of types it does not own.
func ownedRevisionStatus(rev *syncv1.Revision) *syncv1.RevisionStatus {
	s := rev.Status.DeepCopy()
	s.Conditions = ssa.Conditions(s.Conditions, revisionConditions)
	return s
}
