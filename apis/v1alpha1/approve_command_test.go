package v1alpha1

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestApproveCommand_NamesApplicationNamespaceAndRevision(t *testing.T) {
	tests := []struct {
		namespace, app, revision string
		want                     string
	}{
		{namespace: "payments", app: "api", revision: "api-0123456789", want: "ksync approve api -n payments --revision api-0123456789"},
		{namespace: "demo", app: "payments", revision: "payments-3673833391", want: "ksync approve payments -n demo --revision payments-3673833391"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			app := &Application{ObjectMeta: metav1.ObjectMeta{Namespace: tc.namespace, Name: tc.app}}
			if got := app.ApproveCommand(tc.revision); got != tc.want {
				t.Errorf("ApproveCommand(%q) = %q, want %q", tc.revision, got, tc.want)
			}
		})
	}
}
