package plan

import (
	"fmt"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/redact"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/validation"
)

// Diff is a unified diff, with three lines of context, from the YAML of the
// normalised live object ("--- live") to that of its normalised dry-run
// ("+++ desired"). Secret values are redacted with redact.Pair, so the diff
// shows which values change but none of them. Either side may be nil: a
// create diffs from nothing, a delete to nothing. Equal objects give "".
//
// The diff is cut after the last whole line that fits in
// syncv1.MaxDiffBytes, and truncated says so.
func Diff(live, dryRun *unstructured.Unstructured) (diff string, truncated bool, err error) {
	if live == nil && dryRun == nil {
		return "", false, nil
	}
	name := validation.Describe(firstNonNil(dryRun, live))
	redactedLive, redactedDesired := redact.Pair(Normalize(live), Normalize(dryRun))
	a, err := yamlLines(redactedLive)
	if err != nil {
		return "", false, fmt.Errorf("diff %s: live: %w", name, err)
	}
	b, err := yamlLines(redactedDesired)
	if err != nil {
		return "", false, fmt.Errorf("diff %s: dry-run: %w", name, err)
	}
	text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: a, B: b, FromFile: "live", ToFile: "desired", Context: 3,
	})
	if err != nil {
		return "", false, fmt.Errorf("diff %s: %w", name, err)
	}
	diff, truncated = truncateLines(text, syncv1.MaxDiffBytes)
	return diff, truncated, nil
}

// yamlLines renders obj as YAML lines, each keeping its newline. nil has no lines.
func yamlLines(obj *unstructured.Unstructured) ([]string, error) {
	if obj == nil {
		return nil, nil
	}
	out, err := yaml.Marshal(obj.Object)
	if err != nil {
		return nil, err
	}
	lines := strings.SplitAfter(string(out), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines, nil
}

// truncateLines keeps the whole lines of s that fit in limit bytes.
func truncateLines(s string, limit int) (string, bool) {
	if len(s) <= limit {
		return s, false
	}
	cut := strings.LastIndexByte(s[:limit], '\n')
	return s[:cut+1], true
}
