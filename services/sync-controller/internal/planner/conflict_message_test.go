package planner

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestConflictMessage_NamesEveryManagerAndBoundsTheFields(t *testing.T) {
	cause := func(manager, field string) metav1.StatusCause {
		return metav1.StatusCause{Type: metav1.CauseTypeFieldManagerConflict, Message: fmt.Sprintf("conflict with %q using v1", manager), Field: field}
	}
	status := metav1.Status{Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{
		cause("kubectl-edit", ".data.a"), cause("kubectl-edit", ".data.b"), cause("kubectl-edit", ".data.c"),
		cause("kubectl-edit", ".data.d"), cause("helm", ".metadata.labels.team"),
		{Type: metav1.CauseTypeFieldValueInvalid, Message: "not a conflict", Field: ".spec"},
	}}}
	got := conflictMessage(ObjectID{Kind: "ConfigMap", Namespace: "shop", Name: "settings"}, status)
	for _, want := range []string{
		"ConfigMap shop/settings",
		`field manager "helm" owns .metadata.labels.team`,
		`field manager "kubectl-edit" owns .data.a, .data.b, .data.c and 1 more field(s)`,
		"does not force another manager's fields",
		"leave the field(s) out of the manifests in Git",
		"have that manager give them up",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("conflictMessage() = %q, want it to contain %q", got, want)
		}
	}
	if strings.Contains(got, ".spec") {
		t.Errorf("conflictMessage() = %q names a cause that is not a conflict", got)
	}
}
