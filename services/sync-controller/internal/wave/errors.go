package wave

import (
	"fmt"
	"strings"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/message"
)

const (
	// maxValueBytes bounds an annotation value quoted in a message.
	maxValueBytes = 64
	// maxListedErrors is how many errors PlanError spells out; the rest are counted.
	maxListedErrors = 5
)

// ValidationError is an object Kuvryn Sync refuses to order: a sync-wave
// annotation that is not an int32, or an object that appears twice. It fails
// the Revision with reason ValidationFailure.
type ValidationError struct {
	// Object is "Kind namespace/name", or "Kind name" when cluster-scoped.
	Object string
	// Annotation is the offending annotation key; empty when the object
	// itself is the problem.
	Annotation string
	// Value is the annotation's value as written.
	Value string
	// Problem says what is wrong.
	Problem string
}

func (e *ValidationError) Error() string {
	if e.Annotation == "" {
		return e.Object + ": " + e.Problem
	}
	return fmt.Sprintf("%s: annotation %s=%q: %s", e.Object, e.Annotation, message.Bound(e.Value, maxValueBytes), e.Problem)
}

// Reason is the condition reason the error fails the Revision with.
func (e *ValidationError) Reason() string {
	return syncv1.ReasonValidationFailure
}

// PlanError is every object Plan refused, so that one pass reports them all.
// Errs holds *ValidationError and *hook.ValidationError values.
type PlanError struct {
	Errs []error
}

// Error lists the first few errors and counts the rest, within
// syncv1.MaxMessageBytes, so it fits a condition message as it is.
func (e *PlanError) Error() string {
	listed := make([]string, 0, maxListedErrors)
	for i, err := range e.Errs {
		if i == maxListedErrors {
			break
		}
		listed = append(listed, err.Error())
	}
	msg := fmt.Sprintf("%d invalid object(s): %s", len(e.Errs), strings.Join(listed, "; "))
	if more := len(e.Errs) - len(listed); more > 0 {
		msg += fmt.Sprintf("; and %d more", more)
	}
	return message.Bound(msg, syncv1.MaxMessageBytes)
}

// Unwrap lets errors.As reach each object's error.
func (e *PlanError) Unwrap() []error {
	return e.Errs
}

// Reason is the condition reason the error fails the Revision with.
func (e *PlanError) Reason() string {
	return syncv1.ReasonValidationFailure
}
