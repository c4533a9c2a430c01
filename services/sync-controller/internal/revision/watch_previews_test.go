package revision

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestApplicationOfRevision_APreviewRevisionWakesNoApplication: the
// Revision watch maps a desired Revision to its Application, and a preview
// Revision, which the preview controller plans, to none.
func TestApplicationOfRevision_APreviewRevisionWakesNoApplication(t *testing.T) {
	tests := []struct {
		name    string
		preview *syncv1.RevisionPreview
		want    bool
	}{
		{"desired Revision", nil, true},
		{"preview Revision", &syncv1.RevisionPreview{Name: "pr-12", Repository: "platform"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rev := &syncv1.Revision{
				ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-0123456789"},
				Spec:       syncv1.RevisionSpec{ApplicationName: "web", Preview: tt.preview},
			}
			req, ok := applicationOfRevision(rev)
			if ok != tt.want || (ok && req.Namespace+"/"+req.Name != "shop/web") {
				t.Errorf("applicationOfRevision() = %v, %t; want shop/web: %t", req, ok, tt.want)
			}
		})
	}
}
