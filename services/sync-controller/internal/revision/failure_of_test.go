package revision

import (
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/planner"
)

// TestFailureOf_SecretErrorsKeepTheirClassButNeverTheValue: an API error
// about a Secret is a failure or a retry exactly as for any other object,
// but its text, which reaches conditions, Events and the log, keeps only
// the reason, the HTTP code and the causes' field paths, since the API
// server's message may quote the value. The API error stays reachable for
// errors.As, so retries and classification still see it.
func TestFailureOf_SecretErrorsKeepTheirClassButNeverTheValue(t *testing.T) {
	const value = "s3cret-value-in-the-message"
	secrets := schema.GroupResource{Resource: "secrets"}
	invalid := apierrors.NewInvalid(schema.GroupKind{Kind: "Secret"}, "db", nil)
	invalid.ErrStatus.Message = "Secret \"db\" is invalid: data[bad key!]: " + value
	invalid.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseTypeFieldValueInvalid, Field: "data[bad key!]", Message: value}}
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		err  error
		// reason is the failure's reason; empty when the error is retried.
		reason string
		// want is what the error's text must hold.
		want []string
		// leaks is true for an object that is not a Secret, whose message
		// is kept whole.
		leaks bool
	}{
		{name: "a Secret's internal error is retried without its message",
			obj: secretManifest("db", func(map[string]any) {}), err: apierrors.NewInternalError(errors.New("decoding " + value)),
			want: []string{"apply Secret shop/db", "refused by the API server (InternalError)"}},
		{name: "a Secret's timeout is retried without its message",
			obj: secretManifest("db", func(map[string]any) {}), err: apierrors.NewTimeoutError("etcd slow "+value, 1),
			want: []string{"refused by the API server (Timeout)"}},
		{name: "a Secret's schema mismatch fails without its message",
			obj: secretManifest("db", func(map[string]any) {}), err: apierrors.NewInternalError(errors.New(planner.TypedPatchRefusal + ": .stringData.password: expected string, got &value.valueUnstructured{Value:\"" + value + "\"}")),
			reason: syncv1.ReasonValidationFailure, want: []string{"refused by the API server (InternalError)"}},
		{name: "a Secret's invalid field fails naming the field, not the value",
			obj: secretManifest("db", func(map[string]any) {}), err: invalid,
			reason: syncv1.ReasonValidationFailure, want: []string{"refused by the API server (Invalid): data[bad key!]: FieldValueInvalid"}},
		{name: "a Secret's forbidden apply fails without its message",
			obj: secretManifest("db", func(map[string]any) {}), err: apierrors.NewForbidden(secrets, "db", errors.New(value)),
			reason: syncv1.ReasonApplyFailed, want: []string{"refused by the API server (Forbidden)"}},
		{name: "a ConfigMap's internal error is retried with its message",
			obj: configMapManifest(), err: apierrors.NewInternalError(errors.New("decoding " + value)),
			want: []string{"apply ConfigMap shop/settings", value}, leaks: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.obj.SetNamespace("shop")
			err := planner.FailureOf(tt.obj, "apply", tt.err, syncv1.ReasonValidationFailure)
			f, failed := planner.AsFailure(err)
			switch {
			case tt.reason == "" && failed:
				t.Errorf("planner.FailureOf() = failure %q (%s), want the error retried", f.Message, f.Reason)
			case tt.reason != "" && (!failed || f.Reason != tt.reason):
				t.Errorf("planner.FailureOf() = %v, want a failure with reason %s", err, tt.reason)
			}
			if !failed {
				var status apierrors.APIStatus
				if !errors.As(err, &status) {
					t.Errorf("planner.FailureOf() = %T, whose API error errors.As no longer finds", err)
				}
			}
			if !contains(err.Error(), tt.want...) {
				t.Errorf("planner.FailureOf() = %q, want it to hold %q", err, tt.want)
			}
			if !tt.leaks && strings.Contains(err.Error(), value) {
				t.Errorf("planner.FailureOf() = %q, which quotes the value", err)
			}
		})
	}
}

func configMapManifest() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "settings"},
	}}
}
