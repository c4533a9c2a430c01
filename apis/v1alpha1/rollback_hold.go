package v1alpha1

// RollbackHold is the Revision a rollback to target holds, the one it rolls
// back from: the desired Revision, even one that never deployed (a failing
// hook), since holding the deployed one would let the still-desired failing
// Revision release the hold; else the deployed one. A Revision is never
// held by a rollback to itself: "" when nothing is held. The sync-controller
// decides by it when the rollout of target starts, and ksync rollback
// predicts by it.
func (s *ApplicationStatus) RollbackHold(target string) string {
	from := s.DesiredRevision
	if from == "" || from == target {
		from = s.DeployedRevision
	}
	if from == target {
		return ""
	}
	return from
}
