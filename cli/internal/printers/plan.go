package printers

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// Summary is the one-line count of a plan's actions.
func Summary(s syncv1.PlanSummary) string {
	return fmt.Sprintf("%d to create, %d to update, %d to delete, %d unchanged", s.Create, s.Update, s.Delete, s.Unchanged)
}

// Plan writes a Revision's plan: its digest and summary, a table of the
// entries (ACTION, KIND, NAMESPACE/NAME, WAVE, HOOK; a forced entry's
// action reads "update (force)"), then each entry's
// diff, with markers where status left entries or diff lines out. Callers
// pass a plan that went through ConcealSecretValues.
func Plan(w io.Writer, revision string, plan syncv1.Plan, o Options) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Revision:  %s\n", Sanitize(revision))
	fmt.Fprintf(&b, "Digest:    %s\n", Sanitize(plan.Digest))
	if !plan.PlannedAt.IsZero() {
		fmt.Fprintf(&b, "Planned:   %s\n", Timestamp(&plan.PlannedAt))
	}
	fmt.Fprintf(&b, "Summary:   %s\n", Summary(plan.Summary))
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if len(plan.Entries) == 0 && !plan.Truncated {
		return nil
	}

	t := Table{Header: []string{"ACTION", "KIND", "NAMESPACE/NAME", "WAVE", "HOOK"}}
	for _, e := range plan.Entries {
		t.Add(actionCell(e), Plain(e.Kind), Plain(objectName(e.ObjectRef)), Plain(strconv.Itoa(int(e.Wave))), Plain(e.Hook))
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	if err := t.Write(w, o.Color); err != nil {
		return err
	}
	b.Reset()
	if plan.Truncated {
		s := plan.Summary
		total := s.Create + s.Update + s.Delete + s.Unchanged
		fmt.Fprintf(&b, "(plan truncated: %d of %d entries shown)\n", len(plan.Entries), total)
	}
	for _, e := range plan.Entries {
		if e.Diff == "" {
			continue
		}
		fmt.Fprintf(&b, "\nDiff of %s %s (%s):\n", Sanitize(e.Kind), Sanitize(objectName(e.ObjectRef)), e.Action)
		for _, line := range strings.SplitAfter(strings.TrimSuffix(e.Diff, "\n"), "\n") {
			line = Sanitize(strings.TrimSuffix(line, "\n"))
			b.WriteString("    " + Colorize(line, diffColor(line), o.Color) + "\n")
		}
		if e.DiffTruncated {
			fmt.Fprintf(&b, "    (diff truncated at %d bytes)\n", syncv1.MaxDiffBytes)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func objectName(ref syncv1.ObjectRef) string {
	if ref.Namespace == "" {
		return ref.Name
	}
	return ref.Namespace + "/" + ref.Name
}

func actionCell(e syncv1.PlanEntry) Cell {
	text := string(e.Action)
	if e.Force {
		text += " (force)"
	}
	switch e.Action {
	case syncv1.ActionCreate:
		return Cell{Text: text, Color: Green}
	case syncv1.ActionUpdate:
		return Cell{Text: text, Color: Yellow}
	case syncv1.ActionDelete:
		return Cell{Text: text, Color: Red}
	}
	return Plain(text)
}

func diffColor(line string) Color {
	switch {
	case strings.HasPrefix(line, "+++ "), strings.HasPrefix(line, "--- "):
		return ""
	case strings.HasPrefix(line, "+"):
		return Green
	case strings.HasPrefix(line, "-"):
		return Red
	}
	return ""
}
