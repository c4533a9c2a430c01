package render

import (
	"errors"
	"fmt"
	"regexp"

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

// nestedCall is how text/template joins the error of a template function
// to its caller's: a chart's include chain repeats it once per level.
var nestedCall = regexp.MustCompile(`: error calling (include|tpl): `)

// collapseNesting shortens an error that passed through more than two
// nested include or tpl calls to the outermost call and the innermost
// cause, which is what names the template and the fault; Helm allows 1000
// levels, whose chain would push the cause far past any status message.
func collapseNesting(e *Error) *Error {
	msg := e.Err.Error()
	calls := nestedCall.FindAllStringIndex(msg, -1)
	if len(calls) <= 2 {
		return e
	}
	first, last := calls[0], calls[len(calls)-1]
	short := fmt.Sprintf("%s… %d nested calls … %s", msg[:first[1]], len(calls)-1, msg[last[1]:])
	return &Error{Reason: e.Reason, File: e.File, Err: &scrubbedError{msg: short, err: e.Err}}
}
