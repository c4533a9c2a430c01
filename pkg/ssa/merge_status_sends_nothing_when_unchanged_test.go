package ssa_test

import (
	"strconv"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/ssa"
)

func TestMergeStatus_SendsNothingWhenUnchanged(t *testing.T) {
	status := &syncv1.RevisionStatus{Phase: syncv1.PhaseApplying, Attempt: 1,
		Waves: []syncv1.WaveStatus{{Wave: 0, State: syncv1.WaveApplying, Objects: 4}}}
	cases := []struct {
		name            string
		written, status any
		wantRequests    int64
	}{
		{"the same status", status, status.DeepCopy(), 0},
		{"the same status, once as a map", map[string]any{"phase": "Applying", "attempt": 1,
			"waves": []any{map[string]any{"wave": 0, "state": "Applying", "objects": 4}}}, status, 0},
		{"no status, nil and empty", nil, &syncv1.RevisionStatus{}, 0},
		{"no status, two nil pointers", (*syncv1.RevisionStatus)(nil), (*syncv1.RevisionStatus)(nil), 0},
		{"a changed field is sent", status, &syncv1.RevisionStatus{Phase: syncv1.PhaseHealthy, Attempt: 1,
			Waves: status.Waves}, 1},
	}
	ns := newNamespace(t)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rev := newRevision(t, ns, "web-"+strconv.Itoa(i))
			must(t, ssa.MergeStatus(t.Context(), admin, rev, syncv1.FieldManagerSync, nil, tc.written))
			before := rev.GetResourceVersion()

			c, sent := countingClient(t)
			must(t, ssa.MergeStatus(t.Context(), c, rev, syncv1.FieldManagerSync, tc.written, tc.status))
			if got := sent.n.Load(); got != tc.wantRequests {
				t.Errorf("%d requests sent, want %d", got, tc.wantRequests)
			}
			var live metav1.PartialObjectMetadata
			live.SetGroupVersionKind(syncv1.GroupVersion.WithKind("Revision"))
			must(t, admin.Get(t.Context(), client.ObjectKeyFromObject(rev), &live))
			if changed := live.ResourceVersion != before; changed != (tc.wantRequests > 0) {
				t.Errorf("resourceVersion %s → %s, want changed = %v", before, live.ResourceVersion, tc.wantRequests > 0)
			}
			if rev.GetResourceVersion() != live.ResourceVersion {
				t.Errorf("obj holds resourceVersion %s, the API server %s", rev.GetResourceVersion(), live.ResourceVersion)
			}
		})
	}
}
