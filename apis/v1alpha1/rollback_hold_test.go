package v1alpha1

import "testing"

func TestRollbackHold_HoldsTheDesiredElseTheDeployedNeverTheTarget(t *testing.T) {
	tests := []struct {
		name              string
		desired, deployed string
		target            string
		want              string
	}{
		{name: "the desired Revision, deployed", desired: "api-3", deployed: "api-3", target: "api-1", want: "api-3"},
		{name: "the desired Revision, even one that never deployed", desired: "api-4", deployed: "api-3", target: "api-1", want: "api-4"},
		{name: "no desired Revision: the deployed one", deployed: "api-3", target: "api-1", want: "api-3"},
		{name: "rolling back to the desired Revision holds the deployed one", desired: "api-1", deployed: "api-3", target: "api-1", want: "api-3"},
		{name: "rolling back to the desired and deployed Revision holds nothing", desired: "api-1", deployed: "api-1", target: "api-1", want: ""},
		{name: "rolling back to the deployed Revision with none desired holds nothing", deployed: "api-1", target: "api-1", want: ""},
		{name: "rolling back to the desired Revision with none deployed holds nothing", desired: "api-1", target: "api-1", want: ""},
		{name: "nothing desired or deployed holds nothing", target: "api-1", want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &ApplicationStatus{DesiredRevision: tc.desired, DeployedRevision: tc.deployed}
			if got := s.RollbackHold(tc.target); got != tc.want {
				t.Errorf("RollbackHold(%q) with desired %q, deployed %q = %q, want %q", tc.target, tc.desired, tc.deployed, got, tc.want)
			}
		})
	}
}
