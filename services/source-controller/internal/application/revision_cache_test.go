package application

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

func TestRevisionCache_KeepsWhatTheSourceControllerReadsAndDropsTheRollout(t *testing.T) {
	read := syncv1.RevisionStatus{
		ObservedGeneration: 1,
		Conditions:         []metav1.Condition{{Type: syncv1.ConditionRendered, Status: metav1.ConditionTrue, Reason: syncv1.ReasonSucceeded}},
		Source:             &syncv1.RevisionSource{Commit: "0123abcd"},
		Phase:              syncv1.PhaseFailed,
		Attempt:            2,
	}
	for _, tc := range []struct {
		name   string
		status syncv1.RevisionStatus
	}{
		{name: "only what it reads", status: read},
		{name: "a whole rollout", status: func() syncv1.RevisionStatus {
			s := *read.DeepCopy()
			s.Plan = &syncv1.Plan{Digest: "sha256:00"}
			s.Drift = "1 object drifted"
			s.Approval = &syncv1.ApprovalRecord{By: "alice"}
			s.Hooks = &syncv1.HookList{}
			s.Waves = []syncv1.WaveStatus{{Wave: 1}}
			s.Inventory = &syncv1.Inventory{Entries: []string{"v1/ConfigMap/shop/settings"}}
			s.Health = syncv1.HealthDegraded
			s.Diagnosis = &syncv1.Diagnosis{}
			return s
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rev := &syncv1.Revision{ObjectMeta: metav1.ObjectMeta{Name: "shop-0123"}, Status: tc.status}
			out, err := RevisionCache().Transform(rev)
			if err != nil {
				t.Fatal(err)
			}
			if got := out.(*syncv1.Revision).Status; !equality.Semantic.DeepEqual(got, read) {
				t.Fatalf("cached status:\n%+v\nwant\n%+v", got, read)
			}
		})
	}
}
