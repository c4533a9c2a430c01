package planner

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/redact"
)

// Failure stops a Revision: reason is a condition reason from names.go and
// Message names the object, the field and what is wrong. Errors that are
// not failures are transient and retried.
type Failure struct {
	Reason  string
	Message string
	// Object is the object the failure is about, when it is about one.
	Object *syncv1.ObjectRef
}

func (f *Failure) Error() string { return f.Message }

// AsFailure reports whether err is, or wraps, a failure.
func AsFailure(err error) (*Failure, bool) {
	var f *Failure
	ok := errors.As(err, &f)
	return f, ok
}

// TypedPatchRefusal starts the API server's answer to a manifest that does
// not fit the kind's schema, such as a string where a number belongs. It
// comes as an internal error (HTTP 500), but the same manifest is refused
// every time, so retrying cannot help.
const TypedPatchRefusal = "failed to create typed patch object"

// conflictManager finds the manager in a cause message such as
// `conflict with "kubectl-edit" using apps/v1`.
var conflictManager = regexp.MustCompile(`conflict with "([^"]*)"`)

// FailureOf turns an API error about obj into a failure when retrying
// cannot help, and keeps it transient otherwise.
func FailureOf(obj *unstructured.Unstructured, verb string, err error, invalidReason string) error {
	id := IDOf(obj)
	var status apierrors.APIStatus
	switch {
	case meta.IsNoMatchError(err):
		return fmt.Errorf("%s %s: %w: %v", verb, id, ErrKindNotServed, err)
	case apierrors.IsConflict(err) && errors.As(err, &status) && hasConflictCauses(status.Status()):
		return &Failure{Reason: syncv1.ReasonApplyConflict, Message: conflictMessage(id, status.Status()), Object: RefOf(obj)}
	case apierrors.IsForbidden(err):
		return &Failure{Reason: syncv1.ReasonApplyFailed, Message: fmt.Sprintf("%s %s: %s", verb, id, apiMessage(obj, err)), Object: RefOf(obj)}
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err), apierrors.IsMethodNotSupported(err),
		apierrors.IsRequestEntityTooLargeError(err), apierrors.IsUnsupportedMediaType(err),
		apierrors.IsInternalError(err) && strings.Contains(err.Error(), TypedPatchRefusal):
		return &Failure{Reason: invalidReason, Message: fmt.Sprintf("%s %s: %s", verb, id, apiMessage(obj, err)), Object: RefOf(obj)}
	}
	if redact.IsSecret(obj) && errors.As(err, &status) {
		// A transient error is shown in the Planned condition and logged,
		// and the API server's message may quote a value: Server-Side
		// Apply's "failed to create typed patch object" does.
		return &redactedError{message: fmt.Sprintf("%s %s: %s", verb, id, apiMessage(obj, err)), err: err}
	}
	return fmt.Errorf("%s %s: %w", verb, id, err)
}

// redactedError is an API error about a Secret whose text is replaced by
// apiMessage's; errors.Is and errors.As still see the API error.
type redactedError struct {
	message string
	err     error
}

func (e *redactedError) Error() string { return e.message }
func (e *redactedError) Unwrap() error { return e.err }

func hasConflictCauses(s metav1.Status) bool {
	if s.Details == nil {
		return false
	}
	for _, c := range s.Details.Causes {
		if c.Type == metav1.CauseTypeFieldManagerConflict {
			return true
		}
	}
	return false
}

// conflictMessage names the other field managers, the fields they own and
// the ways out, since the owner is usually a controller (an HPA, an
// operator) whose fields stay its own.
func conflictMessage(id ObjectID, s metav1.Status) string {
	byManager := make(map[string][]string)
	for _, c := range s.Details.Causes {
		if c.Type != metav1.CauseTypeFieldManagerConflict {
			continue
		}
		manager := "unknown"
		if m := conflictManager.FindStringSubmatch(c.Message); m != nil {
			manager = m[1]
		}
		byManager[manager] = append(byManager[manager], c.Field)
	}
	managers := make([]string, 0, len(byManager))
	for m := range byManager {
		managers = append(managers, m)
	}
	sort.Strings(managers)
	parts := make([]string, 0, len(managers))
	for _, m := range managers {
		fields := byManager[m]
		sort.Strings(fields)
		listed := fields
		if len(listed) > 3 {
			listed = listed[:3]
		}
		part := fmt.Sprintf("field manager %q owns %s", m, strings.Join(listed, ", "))
		if more := len(fields) - len(listed); more > 0 {
			part += fmt.Sprintf(" and %d more field(s)", more)
		}
		parts = append(parts, part)
	}
	return fmt.Sprintf("%s: Server-Side Apply conflict: %s; Kuvryn Sync does not force another manager's fields: "+
		"leave the field(s) out of the manifests in Git, or have that manager give them up; "+
		"or, in the Application, name them in spec.ignoreDifferences to leave them to it, or take them with "+
		"spec.sync.force or the object's annotation sync.kuvryn.io/force: \"true\"",
		id, strings.Join(parts, "; "))
}

// apiMessage is the API server's message about obj. For Secrets only the
// field paths of the causes are kept, since a message may quote a value.
func apiMessage(obj *unstructured.Unstructured, err error) string {
	if !redact.IsSecret(obj) {
		return err.Error()
	}
	var status apierrors.APIStatus
	reason := string(apierrors.ReasonForError(err))
	if reason == "" && errors.As(err, &status) {
		// An internal error may come without a reason; its code still tells.
		reason = fmt.Sprintf("HTTP %d", status.Status().Code)
	}
	if !errors.As(err, &status) || status.Status().Details == nil || len(status.Status().Details.Causes) == 0 {
		return fmt.Sprintf("refused by the API server (%s)", reason)
	}
	var fields []string
	for _, c := range status.Status().Details.Causes {
		fields = append(fields, fmt.Sprintf("%s: %s", c.Field, c.Type))
	}
	return fmt.Sprintf("refused by the API server (%s): %s", reason, strings.Join(fields, ", "))
}

// ErrDesiredStateMissing is returned while a Revision's desired-state
// Secret does not exist, as between the source-controller creating the
// Revision and the Secret it owns.
var ErrDesiredStateMissing = errors.New("not found")

// ErrKindNotServed is returned while a kind the desired state defines is
// not yet served, so the caller waits for its CustomResourceDefinition.
var ErrKindNotServed = errors.New("kind not served yet")
