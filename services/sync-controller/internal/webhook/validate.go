package webhook

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// Validator refuses Applications whose approval or rollback annotations are
// inconsistent after every mutation: a record without the annotation it
// records, or approve-digest, which is never stored. The Mutator already
// guarantees both; this catches a request that reached storage some other
// way, such as another mutating webhook rewriting annotations after ours.
type Validator struct {
	Decoder admission.Decoder
}

// Handle implements admission.Handler.
func (v *Validator) Handle(_ context.Context, req admission.Request) admission.Response {
	app := &syncv1.Application{}
	if err := v.Decoder.Decode(req, app); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding Application %s/%s: %w", req.Namespace, req.Name, err))
	}
	if found := problems(app.Annotations); len(found) > 0 {
		return admission.Denied(fmt.Sprintf("Application %s/%s: %s", req.Namespace, app.Name, strings.Join(found, "; ")))
	}
	return admission.Allowed("")
}

// problems lists what is wrong with an Application's approval and rollback
// annotations as stored, each naming the annotation.
func problems(annotations map[string]string) []string {
	var found []string
	if _, ok := annotations[syncv1.ApproveDigestAnnotation]; ok {
		found = append(found, fmt.Sprintf("annotation %s is never stored: it reached validation, so the mutating webhook did not process this request",
			syncv1.ApproveDigestAnnotation))
	}
	for _, g := range []guarded{approval, rollback} {
		if _, ok := annotations[g.annotation]; ok {
			continue
		}
		for _, k := range g.records {
			if _, ok := annotations[k]; ok {
				found = append(found, fmt.Sprintf("annotation %s is set without %s, the annotation it records", k, g.annotation))
			}
		}
	}
	return found
}
