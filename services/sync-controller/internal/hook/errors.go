package hook

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/message"
)

// maxValueBytes bounds an annotation value quoted in a message, so a huge
// annotation cannot blow up a condition message.
const maxValueBytes = 64

// ValidationError is a hook annotation Kuvryn Sync refuses to apply. It
// fails the Revision with reason ValidationFailure.
type ValidationError struct {
	// Object is "Kind namespace/name", or "Kind name" when cluster-scoped.
	Object string
	// Annotation is the offending annotation key.
	Annotation string
	// Value is the annotation's value as written.
	Value string
	// Problem says what is wrong with the value.
	Problem string
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("%s: annotation %s=%q: %s", e.Object, e.Annotation, message.Bound(e.Value, maxValueBytes), e.Problem)
}

// Reason is the condition reason the error fails the Revision with.
func (e *ValidationError) Reason() string {
	return syncv1.ReasonValidationFailure
}

// describe names obj the way kubectl users read it.
func describe(obj *unstructured.Unstructured) string {
	if ns := obj.GetNamespace(); ns != "" {
		return obj.GetKind() + " " + ns + "/" + obj.GetName()
	}
	return obj.GetKind() + " " + obj.GetName()
}
