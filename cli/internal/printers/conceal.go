package printers

import (
	"strings"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// HiddenMarker replaces, in a Secret's diff, a value line that did not come
// redacted from the plan.
const HiddenMarker = "*** (hidden by ksync)"

const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// ConcealSecretValues returns a copy of plan in which the diff of every
// Secret entry keeps only redaction markers as values, and the number of
// values it had to hide. The plan in Revision status is redacted already;
// this is the CLI's own guard, so that a value the controller failed to
// redact is still never printed. Every kind named Secret counts, whatever
// its group, since a value wrongly hidden costs less than one shown.
func ConcealSecretValues(plan syncv1.Plan) (syncv1.Plan, int) {
	hidden := 0
	entries := make([]syncv1.PlanEntry, len(plan.Entries))
	for i, e := range plan.Entries {
		if e.Kind == "Secret" && e.Diff != "" {
			var n int
			e.Diff, n = concealSecretDiff(e.Diff)
			hidden += n
		}
		entries[i] = e
	}
	plan.Entries = entries
	return plan, hidden
}

// concealSecretDiff walks a unified diff of a Secret's YAML. Top-level keys
// tell whether a line is inside data or stringData; at the start of a hunk
// that is unknown, and every indented value is treated as a Secret value
// until a top-level key says otherwise. A hidden value also hides the lines
// indented below it, which carry the rest of a block or folded scalar.
func concealSecretDiff(diff string) (string, int) {
	lines := strings.SplitAfter(diff, "\n")
	var (
		inHeader  = true
		known     bool // whether the top-level key of the current line is known
		inValues  bool // inside data or stringData
		hideBelow = -1 // hide lines indented deeper than this; -1 hides none
		hidden    int
	)
	for i, line := range lines {
		switch {
		case line == "":
			continue
		case inHeader && (strings.HasPrefix(line, "--- ") || strings.HasPrefix(line, "+++ ")):
			continue
		case strings.HasPrefix(line, "@@"):
			inHeader, known, hideBelow = false, false, -1
			continue
		case line[0] != ' ' && line[0] != '+' && line[0] != '-':
			continue
		}
		inHeader = false
		prefix := line[:1]
		body, hadNewline := strings.CutSuffix(line[1:], "\n")
		newline := ""
		if hadNewline {
			newline = "\n"
		}
		trimmed := strings.TrimLeft(body, " ")
		indent := len(body) - len(trimmed)
		key, value, hasKey := splitKeyValue(trimmed)

		if hideBelow >= 0 && indent > hideBelow {
			lines[i] = prefix + body[:indent] + HiddenMarker + newline
			hidden++
			continue
		}
		hideBelow = -1

		var secretValue bool
		switch {
		case indent == 0:
			known = true
			inValues = hasKey && (key == "data" || key == "stringData")
			secretValue = inValues && value != ""
		case hasKey && key == lastAppliedAnnotation:
			secretValue = true
		case known && !inValues:
			secretValue = false
		case hasKey && value == "":
			// A map key whose value follows on deeper lines, which are checked themselves.
			secretValue = false
		default:
			secretValue = true
		}
		if !secretValue || (hasKey && isRedactionMarker(value)) {
			continue
		}
		if hasKey {
			lines[i] = prefix + body[:indent] + key + ": '" + HiddenMarker + "'" + newline
		} else {
			lines[i] = prefix + body[:indent] + HiddenMarker + newline
		}
		hideBelow = indent
		hidden++
	}
	return strings.Join(lines, ""), hidden
}

// splitKeyValue splits a YAML "key: value" or "key:" line.
func splitKeyValue(s string) (key, value string, ok bool) {
	if k, ok := strings.CutSuffix(s, ":"); ok {
		return k, "", true
	}
	k, v, ok := strings.Cut(s, ": ")
	if !ok {
		return "", "", false
	}
	return k, strings.TrimSpace(v), true
}

// isRedactionMarker reports whether value, quoted or not, is one of the
// markers the sync-controller writes in place of Secret values, or ksync's
// own. Only the exact markers count, so a real value merely starting with
// "***" is not mistaken for one.
func isRedactionMarker(value string) bool {
	if len(value) >= 2 && (value[0] == '\'' || value[0] == '"') && value[len(value)-1] == value[0] {
		value = value[1 : len(value)-1]
	}
	switch value {
	case syncv1.RedactedMarker, syncv1.RedactedUnchangedMarker, syncv1.RedactedOldMarker, syncv1.RedactedNewMarker, HiddenMarker:
		return true
	}
	return false
}
