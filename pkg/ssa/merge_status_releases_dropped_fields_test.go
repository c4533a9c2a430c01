package ssa_test

import (
	"strconv"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/ssa"
)

func TestMergeStatus_ReleasesDroppedFields(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC))
	approval := &syncv1.ApprovalRecord{Revision: "web-1", By: "alice", At: at, Digest: "sha256:1", Rollback: true, RequestID: "r1"}
	healthy := metav1.Condition{Type: syncv1.ConditionHealthy, Status: metav1.ConditionTrue, Reason: "Healthy", Message: "all healthy", LastTransitionTime: at}
	planned := metav1.Condition{Type: syncv1.ConditionPlanned, Status: metav1.ConditionTrue, Reason: "Planned", Message: "4 objects", LastTransitionTime: at}
	cases := []struct {
		name string
		// other is written first by another field manager with ApplyStatus.
		other *syncv1.RevisionStatus
		// written is on the server, written by MergeStatus; status replaces
		// it, told of written unless unknown.
		written, status *syncv1.RevisionStatus
		unknown         bool
		want            syncv1.RevisionStatus
	}{{
		name:    "a dropped field is deleted, the others stay",
		written: &syncv1.RevisionStatus{Phase: syncv1.PhaseApplying, Attempt: 1, Drift: "ConfigMap/web: data.a"},
		status:  &syncv1.RevisionStatus{Phase: syncv1.PhaseApplying, Attempt: 1},
		want:    syncv1.RevisionStatus{Phase: syncv1.PhaseApplying, Attempt: 1},
	}, {
		name:    "a dropped field inside an object is deleted",
		written: &syncv1.RevisionStatus{Approval: approval},
		status:  &syncv1.RevisionStatus{Approval: &syncv1.ApprovalRecord{Revision: "web-1", By: "alice", At: at, Digest: "sha256:1"}},
		want:    syncv1.RevisionStatus{Approval: &syncv1.ApprovalRecord{Revision: "web-1", By: "alice", At: at, Digest: "sha256:1"}},
	}, {
		name:    "a dropped object is deleted",
		written: &syncv1.RevisionStatus{Phase: syncv1.PhaseFailed, Diagnosis: &syncv1.Diagnosis{Summary: "image pull"}},
		status:  &syncv1.RevisionStatus{Phase: syncv1.PhaseApplying},
		want:    syncv1.RevisionStatus{Phase: syncv1.PhaseApplying},
	}, {
		name:    "a dropped list entry is deleted",
		written: &syncv1.RevisionStatus{Conditions: []metav1.Condition{planned, healthy}},
		status:  &syncv1.RevisionStatus{Conditions: []metav1.Condition{planned}},
		want:    syncv1.RevisionStatus{Conditions: []metav1.Condition{planned}},
	}, {
		name:    "everything dropped leaves no status of the writer",
		written: &syncv1.RevisionStatus{Phase: syncv1.PhaseHealthy, Attempt: 2},
		status:  nil,
		want:    syncv1.RevisionStatus{},
	}, {
		name:    "another writer's field is untouched",
		other:   &syncv1.RevisionStatus{Health: syncv1.HealthDegraded},
		written: &syncv1.RevisionStatus{Phase: syncv1.PhasePlanned, Drift: "ConfigMap/web: data.a"},
		status:  &syncv1.RevisionStatus{Phase: syncv1.PhaseApplying},
		want:    syncv1.RevisionStatus{Health: syncv1.HealthDegraded, Phase: syncv1.PhaseApplying},
	}, {
		name:    "with the last write unknown nothing is released",
		written: &syncv1.RevisionStatus{Phase: syncv1.PhasePlanned, Drift: "ConfigMap/web: data.a"},
		status:  &syncv1.RevisionStatus{Phase: syncv1.PhaseApplying},
		unknown: true,
		want:    syncv1.RevisionStatus{Phase: syncv1.PhaseApplying, Drift: "ConfigMap/web: data.a"},
	}}
	ns := newNamespace(t)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rev := newRevision(t, ns, "web-"+strconv.Itoa(i))
			if tc.other != nil {
				must(t, ssa.ApplyStatus(t.Context(), admin, rev, syncv1.FieldManagerSource, tc.other))
			}
			must(t, ssa.MergeStatus(t.Context(), admin, rev, syncv1.FieldManagerSync, nil, tc.written))
			written := tc.written
			if tc.unknown {
				written = nil
			}
			must(t, ssa.MergeStatus(t.Context(), admin, rev, syncv1.FieldManagerSync, written, tc.status))

			var got syncv1.Revision
			must(t, admin.Get(t.Context(), client.ObjectKeyFromObject(rev), &got))
			if !equality.Semantic.DeepEqual(got.Status, tc.want) {
				t.Errorf("status\n got %+v\nwant %+v", got.Status, tc.want)
			}
		})
	}
}
