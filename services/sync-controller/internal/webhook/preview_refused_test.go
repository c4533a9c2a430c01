package webhook_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestPreview_ApprovingOrRollingBackToAPreviewRevisionIsRefused: a preview
// Revision is planned with dry-runs only; approving it or rolling back to
// it is refused with a message naming it as a preview, even once it has a
// plan, and nothing is recorded on the Application.
func TestPreview_ApprovingOrRollingBackToAPreviewRevisionIsRefused(t *testing.T) {
	ns := namespace(t)
	plan := digest("preview plan " + ns)
	rev := &syncv1.Revision{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api-pr-12-0123456789",
			Labels: map[string]string{syncv1.PreviewLabel: "pr-12", syncv1.ApplicationLabel: "api"}},
		Spec: syncv1.RevisionSpec{
			ApplicationName: "api",
			DesiredState:    syncv1.DesiredStateRef{SecretName: "api-pr-12-0123456789", Digest: digest("desired preview " + ns), Objects: 1},
			Preview:         &syncv1.RevisionPreview{Name: "pr-12", Repository: "platform", Ref: "refs/pull/12/head", Commit: "0123456789abcdef0123456789abcdef01234567"},
		},
	}
	if err := admin.Create(t.Context(), rev); err != nil {
		t.Fatal(err)
	}
	setPlan(t, rev, plan)
	application(t, ns, "api", nil)

	tests := []struct {
		name       string
		annotation map[string]*string
		refused    string
	}{
		{"approve", map[string]*string{syncv1.ApprovedRevisionAnnotation: ptr(rev.Name)}, syncv1.ApprovedRevisionAnnotation},
		{"approve bound to its plan", map[string]*string{syncv1.ApprovedRevisionAnnotation: ptr(rev.Name), syncv1.ApproveDigestAnnotation: ptr(plan)}, syncv1.ApprovedRevisionAnnotation},
		{"roll back to it", map[string]*string{syncv1.RollbackRequestedAnnotation: ptr(rev.Name)}, syncv1.RollbackRequestedAnnotation},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantDenied(t, annotate(t.Context(), alice, ns, "api", tt.annotation),
				tt.refused, rev.Name+" is a preview", "preview pr-12 of Repository platform", "never approved or rolled back to")
			if got := stored(t, ns, "api"); len(got) != 0 {
				t.Errorf("annotations = %v after a refused request, want none", got)
			}
		})
	}
}
