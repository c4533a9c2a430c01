package application

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

func TestRevisionCache_KeepsTheSpecAndDropsTheRollout(t *testing.T) {
	spec := syncv1.RevisionSpec{
		ApplicationName: "shop",
		DesiredState:    syncv1.DesiredStateRef{SecretName: "shop-0123", Digest: "sha256:0123", Objects: 2},
		Source:          &syncv1.RevisionSource{Commit: "0123abcd", Path: "apps/shop"},
	}
	for _, tc := range []struct {
		name   string
		status syncv1.RevisionStatus
	}{
		{name: "no status yet"},
		{name: "a whole rollout", status: syncv1.RevisionStatus{
			ObservedGeneration: 1,
			Conditions:         []metav1.Condition{{Type: syncv1.ConditionPlanned, Status: metav1.ConditionTrue, Reason: syncv1.ReasonSucceeded}},
			Phase:              syncv1.PhaseFailed,
			Attempt:            2,
			Plan:               &syncv1.Plan{Digest: "sha256:00"},
			Drift:              "1 object drifted",
			Approval:           &syncv1.ApprovalRecord{By: "alice"},
			Hooks:              &syncv1.HookList{},
			Waves:              []syncv1.WaveStatus{{Wave: 1}},
			Inventory:          &syncv1.Inventory{Entries: []string{"v1/ConfigMap/shop/settings"}},
			Health:             syncv1.HealthDegraded,
			Diagnosis:          &syncv1.Diagnosis{},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rev := &syncv1.Revision{ObjectMeta: metav1.ObjectMeta{Name: "shop-0123"}, Spec: *spec.DeepCopy(), Status: tc.status}
			out, err := RevisionCache().Transform(rev)
			if err != nil {
				t.Fatal(err)
			}
			got := out.(*syncv1.Revision)
			if !equality.Semantic.DeepEqual(got.Spec, spec) {
				t.Fatalf("cached spec:\n%+v\nwant\n%+v", got.Spec, spec)
			}
			if !equality.Semantic.DeepEqual(got.Status, syncv1.RevisionStatus{}) {
				t.Fatalf("cached status %+v, want none", got.Status)
			}
		})
	}
}
