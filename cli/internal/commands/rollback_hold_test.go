package commands

import (
	"fmt"

	"testing"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestRollback_NamesTheRevisionTheSyncControllerHolds: ksync prints the
// Revision the rollback holds as the sync-controller decides it
// (ApplicationStatus.RollbackHold), and says so when it holds none.
func TestRollback_NamesTheRevisionTheSyncControllerHolds(t *testing.T) {
	cases := []struct {
		name              string
		desired, deployed string
		want              string
	}{
		{name: "holds the desired Revision that never deployed", desired: "api-3", deployed: "api-2",
			want: "Rolling back api to Revision api-1 (from api-3)\n" +
				"Requested rollback of Application %s/api to Revision api-1 (request %s).\n" +
				"Rollback started: Revision api-1 is rolling out; Revision api-3 is held until a newer desired state arrives.\n"},
		{name: "holds the deployed Revision when none is desired", deployed: "api-2",
			want: "Rolling back api to Revision api-1 (from api-2)\n" +
				"Requested rollback of Application %s/api to Revision api-1 (request %s).\n" +
				"Rollback started: Revision api-1 is rolling out; Revision api-2 is held until a newer desired state arrives.\n"},
		{name: "holds nothing when nothing is desired or deployed",
			want: "Rolling back api to Revision api-1\n" +
				"Requested rollback of Application %s/api to Revision api-1 (request %s).\n" +
				"Rollback started: Revision api-1 is rolling out; no Revision is held.\n"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := namespace(t, "rollback-hold-"+string(rune('a'+i)), nil)
			app := application(ns, "api")
			app.Status = syncv1.ApplicationStatus{DesiredRevision: tc.desired, DeployedRevision: tc.deployed}
			createApplication(t, app)
			createRevision(t, ns, "api", "api-1", syncv1.RevisionStatus{Phase: syncv1.PhaseHealthy})
			actOnRollbacks(t, ns, "api")

			r := ksync(t, "rollback", "api", "-n", ns, "--yes", "--timeout=30s")
			r.expect(t, 0)
			id := getApp(t, ns, "api").Annotations[syncv1.RollbackRequestIDAnnotation]
			if want := fmt.Sprintf(tc.want, ns, id); r.stdout != want {
				t.Errorf("stdout %q, want %q", r.stdout, want)
			}
		})
	}
}
