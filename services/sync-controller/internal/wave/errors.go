package wave

import (
	"fmt"
	"strings"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/message"
)

// maxListedErrors is how many errors OrderError spells out; the rest are counted.
const maxListedErrors = 5

// OrderError is every object Order refused, so that one pass reports them all.
// Errs holds *validation.Error values.
type OrderError struct {
	Errs []error
}

// Error lists the first few errors and counts the rest, within
// syncv1.MaxMessageBytes, so it fits a condition message as it is.
func (e *OrderError) Error() string {
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
func (e *OrderError) Unwrap() []error {
	return e.Errs
}

// Reason is the condition reason the error fails the Revision with.
func (e *OrderError) Reason() string {
	return syncv1.ReasonValidationFailure
}
