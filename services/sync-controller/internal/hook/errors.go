package hook

import (
	"fmt"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
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
	return fmt.Sprintf("%s: annotation %s=%q: %s", e.Object, e.Annotation, bounded(e.Value), e.Problem)
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

// bounded cuts s to at most maxValueBytes on a rune boundary, marking the cut.
func bounded(s string) string {
	if len(s) <= maxValueBytes {
		return s
	}
	const ellipsis = "..."
	cut := maxValueBytes - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}
