package ssa_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/ssa"
)

// A Revision whose status the sync-controller applied so far (every Revision
// today) is merge-patched from then on by the same field manager.
func TestMergeStatus_FollowsApplyStatusOfTheSameManager(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC))
	applying := metav1.Condition{Type: syncv1.ConditionRolloutComplete, Status: metav1.ConditionFalse, Reason: "Applying", Message: "wave 0", LastTransitionTime: at}
	complete := metav1.Condition{Type: syncv1.ConditionRolloutComplete, Status: metav1.ConditionTrue, Reason: "Succeeded", Message: "4 objects", LastTransitionTime: at}
	applied := &syncv1.RevisionStatus{
		Phase: syncv1.PhaseApplying, Attempt: 1, Drift: "ConfigMap/web: data.a",
		Conditions: []metav1.Condition{applying},
		Waves:      []syncv1.WaveStatus{{Wave: 0, State: syncv1.WaveApplying, Objects: 2}, {Wave: 1, State: syncv1.WavePending, Objects: 2}},
		Inventory:  &syncv1.Inventory{Entries: []string{"ns_a__ConfigMap_v1", "ns_b__ConfigMap_v1"}},
	}
	cases := []struct {
		name   string
		status *syncv1.RevisionStatus
		// dropped are the status fields no managedFields entry may list.
		dropped []string
	}{{
		name: "fields changed and dropped",
		status: &syncv1.RevisionStatus{
			Phase: syncv1.PhaseHealthy, Attempt: 1, Health: syncv1.HealthHealthy,
			Conditions: []metav1.Condition{complete},
			Waves:      []syncv1.WaveStatus{{Wave: 0, State: syncv1.WaveHealthy, Objects: 2}, {Wave: 1, State: syncv1.WaveHealthy, Objects: 2}},
			Inventory:  applied.Inventory,
		},
		dropped: []string{"f:drift"},
	}, {
		name:    "everything dropped but the attempt",
		status:  &syncv1.RevisionStatus{Attempt: 1},
		dropped: []string{"f:drift", "f:phase", "f:conditions", "f:waves", "f:inventory"},
	}}
	ns := newNamespace(t)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rev := newRevision(t, ns, "web-"+strconv.Itoa(i))
			must(t, ssa.ApplyStatus(t.Context(), admin, rev, syncv1.FieldManagerSync, applied))
			must(t, ssa.MergeStatus(t.Context(), admin, rev, syncv1.FieldManagerSync, applied, tc.status))

			var got syncv1.Revision
			must(t, admin.Get(t.Context(), client.ObjectKeyFromObject(rev), &got))
			if !equality.Semantic.DeepEqual(got.Status, *tc.status) {
				t.Errorf("status\n got %+v\nwant %+v", got.Status, *tc.status)
			}
			if got.ResourceVersion != rev.ResourceVersion {
				t.Errorf("obj holds resourceVersion %s, the API server %s", rev.ResourceVersion, got.ResourceVersion)
			}
			// Every status field left is the sync-controller's, whether
			// its Apply or its Update entry holds it, and no entry holds a
			// dropped one.
			attemptOwned := false
			for _, e := range got.ManagedFields {
				if e.Subresource != "status" {
					continue
				}
				fields := e.FieldsV1.GetRawString()
				if e.Manager != syncv1.FieldManagerSync {
					t.Errorf("%s (%s) manages status fields: %s", e.Manager, e.Operation, fields)
				}
				for _, f := range tc.dropped {
					if strings.Contains(fields, `"`+f+`"`) {
						t.Errorf("%s (%s) still manages the dropped %s: %s", e.Manager, e.Operation, f, fields)
					}
				}
				attemptOwned = attemptOwned || strings.Contains(fields, `"f:attempt"`)
			}
			if !attemptOwned {
				t.Errorf("no managedFields entry of %s holds status.attempt: %+v", syncv1.FieldManagerSync, got.ManagedFields)
			}
		})
	}
}
