package webhook_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/webhook"
)

// FuzzMutate: whatever an UPDATE of an Application carries, the mutating
// webhook never panics, never stores approve-digest, and never leaves a
// record of who approved or asked for a rollback holding a value other than
// the stored one or the requester's name. Revisions are read from the
// suite's real API server, where no fuzzed Revision exists.
func FuzzMutate(f *testing.F) {
	const app = `{"apiVersion":"sync.kuvryn.io/v1alpha1","kind":"Application","metadata":{"name":"api","annotations":%s}}`
	seed := func(annotations, old, user string) {
		f.Add(fmt.Appendf(nil, app, annotations), fmt.Appendf(nil, app, old), user)
	}
	seed(`{"sync.kuvryn.io/approved-by":"mallory"}`, `{}`, "alice")
	seed(`{"sync.kuvryn.io/rollback-requested":"api-1","sync.kuvryn.io/rollback-request-id":"<x>"}`, `{}`, "bob")
	seed(`{"sync.kuvryn.io/approved-revision":"api-1","sync.kuvryn.io/approve-digest":"sha256:00"}`, `{}`, "")
	seed(`null`, `{"sync.kuvryn.io/rollback-requested-by":"carol","sync.kuvryn.io/rollback-requested":"api-1"}`, "carol")
	f.Add([]byte(`not json`), []byte(`[]`), "x")

	m := &webhook.Mutator{Reader: admin, Decoder: admission.NewDecoder(manager.Scheme()), Now: time.Now}
	f.Fuzz(func(t *testing.T, object, old []byte, user string) {
		req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
			Operation: admissionv1.Update, Namespace: "fuzz", Name: "api",
			Object: runtime.RawExtension{Raw: object}, OldObject: runtime.RawExtension{Raw: old},
			UserInfo: authenticationv1.UserInfo{Username: user},
		}}
		resp := m.Handle(t.Context(), req)
		if !resp.Allowed || len(resp.Patches) == 0 {
			return
		}
		var stored struct {
			Metadata struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(old, &stored)
		for _, p := range resp.Patches {
			result, ok := p.Value.(map[string]string)
			if !ok {
				t.Fatalf("patch %+v does not replace the annotations with a map", p)
			}
			if _, kept := result[syncv1.ApproveDigestAnnotation]; kept {
				t.Fatalf("approve-digest stored: %v", result)
			}
			for _, k := range []string{syncv1.ApprovedByAnnotation, syncv1.RollbackRequestedByAnnotation} {
				if v, set := result[k]; set && v != stored.Metadata.Annotations[k] && v != user {
					t.Fatalf("record %s = %q, neither the stored %q nor the requester %q", k, v, stored.Metadata.Annotations[k], user)
				}
			}
		}
	})
}
