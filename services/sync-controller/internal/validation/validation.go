// Package validation is the one form in which the sync-controller's checks
// of a desired state (hook and wave annotations, duplicates, normalization)
// name an object and say what is wrong with it.
package validation

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/message"
)

// MaxValueBytes bounds an annotation value quoted in a message, so a huge
// annotation cannot blow up a condition message.
const MaxValueBytes = 64

// Error is an object Kuvryn Sync refuses: an annotation it cannot honour, or
// an object that appears twice. It fails the Revision with reason
// ValidationFailure.
type Error struct {
	// Object is Describe of the object.
	Object string
	// Annotation is the offending annotation key; empty when the object
	// itself is the problem.
	Annotation string
	// Value is the annotation's value as written.
	Value string
	// Problem says what is wrong.
	Problem string
}

func (e *Error) Error() string {
	if e.Annotation == "" {
		return e.Object + ": " + e.Problem
	}
	return fmt.Sprintf("%s: annotation %s=%q: %s", e.Object, e.Annotation, message.Bound(e.Value, MaxValueBytes), e.Problem)
}

// Reason is the condition reason the error fails the Revision with.
func (e *Error) Reason() string {
	return syncv1.ReasonValidationFailure
}

// Describe names obj the way kubectl users read it: "Kind namespace/name",
// or "Kind name" when it has no namespace.
func Describe(obj *unstructured.Unstructured) string {
	if ns := obj.GetNamespace(); ns != "" {
		return obj.GetKind() + " " + ns + "/" + obj.GetName()
	}
	return obj.GetKind() + " " + obj.GetName()
}
