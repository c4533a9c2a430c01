package v1alpha1

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestRevisionApplication_IsSpecApplicationNameNeverTheLabel(t *testing.T) {
	rev := func(namespace, specName, label string) *Revision {
		r := &Revision{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "api-0123456789"}, Spec: RevisionSpec{ApplicationName: specName}}
		if label != "" {
			r.Labels = map[string]string{ApplicationLabel: label}
		}
		return r
	}
	api := types.NamespacedName{Namespace: "shop", Name: "api"}
	tests := []struct {
		name      string
		rev       *Revision
		want      types.NamespacedName
		belongsTo types.NamespacedName
		belongs   bool
	}{
		{name: "spec and label agree", rev: rev("shop", "api", "api"), want: api, belongsTo: api, belongs: true},
		{name: "a relabelled Revision stays its spec's", rev: rev("shop", "api", "web"), want: api, belongsTo: api, belongs: true},
		{name: "the label names no Application", rev: rev("shop", "api", "web"), want: api,
			belongsTo: types.NamespacedName{Namespace: "shop", Name: "web"}, belongs: false},
		{name: "no spec name: the label is not read", rev: rev("shop", "", "api"), want: types.NamespacedName{Namespace: "shop"}, belongsTo: api, belongs: false},
		{name: "another namespace's Application of the same name", rev: rev("shop", "api", "api"), want: api,
			belongsTo: types.NamespacedName{Namespace: "staging", Name: "api"}, belongs: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.rev.ApplicationKey(); got != tc.want {
				t.Errorf("ApplicationKey() = %v, want %v", got, tc.want)
			}
			if got := tc.rev.BelongsTo(tc.belongsTo); got != tc.belongs {
				t.Errorf("BelongsTo(%v) = %v, want %v", tc.belongsTo, got, tc.belongs)
			}
		})
	}
}
