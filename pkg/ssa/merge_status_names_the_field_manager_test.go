package ssa_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/ssa"
)

func TestMergeStatus_NamesTheFieldManager(t *testing.T) {
	ns := newNamespace(t)
	cases := []struct {
		name    string
		obj     func(t *testing.T) client.Object
		manager string
		status  any
		// field is the status field managedFields must list.
		field string
	}{{
		name:    "Revision status by the sync-controller",
		obj:     func(t *testing.T) client.Object { return newRevision(t, ns, "web-1") },
		manager: syncv1.FieldManagerSync,
		status:  syncv1.RevisionStatus{Phase: syncv1.PhaseApplying, Attempt: 1},
		field:   "f:attempt",
	}, {
		name:    "Application status by the source-controller",
		obj:     func(t *testing.T) client.Object { return newApplication(t, ns, "web") },
		manager: syncv1.FieldManagerSource,
		status:  map[string]any{"desiredRevision": "web-1"},
		field:   "f:desiredRevision",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := tc.obj(t)
			must(t, ssa.MergeStatus(t.Context(), admin, obj, tc.manager, nil, tc.status))

			must(t, admin.Get(t.Context(), client.ObjectKeyFromObject(obj), obj))
			var owners []string
			for _, e := range obj.GetManagedFields() {
				if strings.Contains(e.FieldsV1.GetRawString(), `"`+tc.field+`"`) {
					owners = append(owners, e.Manager+" "+string(e.Operation)+" "+e.Subresource)
				}
			}
			want := tc.manager + " " + string(metav1.ManagedFieldsOperationUpdate) + " status"
			if len(owners) != 1 || owners[0] != want {
				t.Errorf("status %s is managed by %q, want only %q", tc.field, owners, want)
			}
		})
	}
}
