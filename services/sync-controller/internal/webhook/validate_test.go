package webhook_test

import (
	"encoding/json"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/webhook"
)

// The mutating webhook always leaves consistent annotations, so through the
// API server the validating webhook never refuses; these cases call it
// directly with what a request bypassing the mutation would store.
func TestValidator_RefusesRecordsWithoutTheAnnotationTheyRecord(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
		// refused lists what the denial must name; empty means allowed.
		refused []string
	}{
		{name: "no annotations", annotations: nil},
		{
			name: "approval with its records",
			annotations: map[string]string{
				syncv1.ApprovedRevisionAnnotation: "api-1",
				syncv1.ApprovedByAnnotation:       "alice",
				syncv1.ApprovedAtAnnotation:       "2030-01-01T00:00:00Z",
				syncv1.ApprovedDigestAnnotation:   digest("plan"),
			},
		},
		{
			name: "rollback request with its records",
			annotations: map[string]string{
				syncv1.RollbackRequestedAnnotation:    "api-1",
				syncv1.RollbackRequestedByAnnotation:  "alice",
				syncv1.RollbackRequestedAtAnnotation:  "2030-01-01T00:00:00Z",
				syncv1.RollbackDesiredStateAnnotation: digest("desired"),
			},
		},
		{
			name:        "approval records without approved-revision",
			annotations: map[string]string{syncv1.ApprovedByAnnotation: "mallory", syncv1.ApprovedDigestAnnotation: digest("x")},
			refused: []string{
				syncv1.ApprovedByAnnotation + " is set without " + syncv1.ApprovedRevisionAnnotation,
				syncv1.ApprovedDigestAnnotation + " is set without " + syncv1.ApprovedRevisionAnnotation,
			},
		},
		{
			name:        "rollback records without rollback-requested",
			annotations: map[string]string{syncv1.RollbackRequestedAtAnnotation: "2030-01-01T00:00:00Z"},
			refused:     []string{syncv1.RollbackRequestedAtAnnotation + " is set without " + syncv1.RollbackRequestedAnnotation},
		},
		{
			name: "approve-digest reaching storage",
			annotations: map[string]string{
				syncv1.ApprovedRevisionAnnotation: "api-1",
				syncv1.ApproveDigestAnnotation:    digest("plan"),
			},
			refused: []string{syncv1.ApproveDigestAnnotation + " is never stored"},
		},
	}
	v := &webhook.Validator{Decoder: admission.NewDecoder(manager.Scheme())}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := newApplication("payments", "api", tt.annotations)
			app.APIVersion, app.Kind = syncv1.GroupVersion.String(), "Application"
			raw, err := json.Marshal(app)
			if err != nil {
				t.Fatal(err)
			}
			resp := v.Handle(t.Context(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
				Operation: admissionv1.Update,
				Namespace: "payments",
				Name:      "api",
				Object:    runtime.RawExtension{Raw: raw},
			}})
			if len(tt.refused) == 0 {
				if !resp.Allowed {
					t.Fatalf("refused: %s", resp.Result.Message)
				}
				return
			}
			if resp.Allowed {
				t.Fatal("allowed, want refused")
			}
			for _, want := range tt.refused {
				if !strings.Contains(resp.Result.Message, want) {
					t.Errorf("message %q does not contain %q", resp.Result.Message, want)
				}
			}
		})
	}
}
