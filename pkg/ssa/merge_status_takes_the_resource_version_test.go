package ssa_test

import (
	"strconv"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/ssa"
)

// MergeStatus takes no optimistic lock: whatever resourceVersion obj holds,
// the write goes through and obj takes the one it produced.
func TestMergeStatus_TakesTheResourceVersionOfItsWrite(t *testing.T) {
	cases := []struct {
		name string
		rv   func(created string) string
	}{
		{"current", func(created string) string { return created }},
		{"stale", func(string) string { return "1" }},
		{"none", func(string) string { return "" }},
	}
	ns := newNamespace(t)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rev := newRevision(t, ns, "web-"+strconv.Itoa(i))
			rev.ResourceVersion = tc.rv(rev.ResourceVersion)
			must(t, ssa.MergeStatus(t.Context(), admin, rev, syncv1.FieldManagerSync, nil, syncv1.RevisionStatus{Attempt: 1}))

			var got syncv1.Revision
			must(t, admin.Get(t.Context(), client.ObjectKeyFromObject(rev), &got))
			if got.Status.Attempt != 1 {
				t.Errorf("status.attempt = %d, want 1", got.Status.Attempt)
			}
			if rev.ResourceVersion != got.ResourceVersion {
				t.Errorf("obj holds resourceVersion %s, the API server %s", rev.ResourceVersion, got.ResourceVersion)
			}
		})
	}
	t.Run("a missing object is an error naming it", func(t *testing.T) {
		rev := &syncv1.Revision{}
		rev.Namespace, rev.Name = ns, "absent"
		err := ssa.MergeStatus(t.Context(), admin, rev, syncv1.FieldManagerSync, nil, syncv1.RevisionStatus{Attempt: 1})
		if !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), `"absent"`) {
			t.Fatalf("got %v, want NotFound naming the Revision", err)
		}
	})
}
