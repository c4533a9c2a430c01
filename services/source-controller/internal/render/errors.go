package render

import (
	"errors"
	"fmt"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// Error is every error Render returns. Reason is the condition reason the
// Revision reports; File, when set, is the repository-relative path (or, for
// charts and Helm output, the chart file) the error is about.
type Error struct {
	// Reason is syncv1.ReasonRenderFailed, syncv1.ReasonValidationFailure or
	// syncv1.ReasonDecryptionFailed.
	Reason string
	File   string
	Err    error
}

func (e *Error) Error() string {
	if e.File == "" {
		return e.Err.Error()
	}
	return e.File + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

func renderFailed(file string, format string, args ...any) *Error {
	return &Error{Reason: syncv1.ReasonRenderFailed, File: file, Err: fmt.Errorf(format, args...)}
}

func validationFailure(file string, format string, args ...any) *Error {
	return &Error{Reason: syncv1.ReasonValidationFailure, File: file, Err: fmt.Errorf(format, args...)}
}

// asError gives err a Reason: errors that already carry one keep it,
// anything else from a renderer library is a RenderFailed.
func asError(file string, err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Reason: syncv1.ReasonRenderFailed, File: file, Err: err}
}
