package payload

import (
	"fmt"
	"strings"
	"unicode/utf8"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// PreviewState is the commit status a preview Revision shows: pending while
// it has no plan, success once Planned, failure once Failed.
type PreviewState string

const (
	PreviewPending PreviewState = "pending"
	PreviewSuccess PreviewState = "success"
	PreviewFailure PreviewState = "failure"
)

// Preview is one preview Revision's result, as a pull or merge request
// hears it. Every text in it comes from the Revision's spec and status: the
// plan's diffs are redacted by the sync-controller, and the desired state
// is never read.
type Preview struct {
	Application ApplicationRef
	Revision    string
	// Name is the preview's name (pr-12, mr-3, branch-…).
	Name string
	// Number of the pull or merge request; zero for a branch, which has
	// none and gets a commit status only.
	Number int
	Commit string
	State  PreviewState
	// NewApplication is set when the Application exists only in the preview.
	NewApplication bool
	Plan           *syncv1.Plan
	Withheld       []string
	// Reason and Message say why a Failed plan failed.
	Reason    string
	Message   string
	Diagnosis *syncv1.Diagnosis
}

// PreviewMarker is the hidden first line of an Application's comment, by
// which the comment is found again and updated in place.
func PreviewMarker(app ApplicationRef) string {
	return fmt.Sprintf("<!-- kuvryn-sync preview %s/%s -->", app.Namespace, app.Name)
}

// PreviewContext is the commit status context of an Application.
func PreviewContext(app ApplicationRef) string { return "kuvryn-sync/" + app.Name }

// maxDescription is GitHub's limit on a commit status description, in
// characters; GitLab allows more.
const maxDescription = 140

// PreviewDescription is the commit status description: what the plan does,
// or why it failed, in at most 140 characters.
func PreviewDescription(p *Preview) string {
	var d string
	switch {
	case p.State == PreviewPending:
		d = "planning " + p.Application.Name + " with a dry-run"
	case p.State == PreviewFailure:
		d = "plan failed: " + p.Reason
		if p.Message != "" {
			d += ": " + p.Message
		}
	case p.Plan != nil:
		d = "plan: " + Summary(p.Plan.Summary)
	default:
		d = "planned"
	}
	return cutRunes(oneLine(d), maxDescription, "…")
}

// truncatedNote ends a comment that was cut to the host's limit; %d is the limit.
const truncatedNote = "\n\n---\n**Truncated:** %s; this comment is limited to %d characters. `ksync previews` and the Revision's status hold the whole plan.\n"

// PreviewComment renders the comment of p in Markdown, at most limit
// characters (runes, as the hosts count them): the hidden marker first, the
// Application, the commit, the plan summary, why a plan failed and its
// diagnosis, what the render withheld, then each entry's action and diff.
// Names and messages are escaped, so an object name cannot inject Markdown
// or HTML; diffs are shown verbatim in code blocks, so redaction markers
// (***) stay as they are. When the whole does not fit, entries are left out
// from the last and a visible note says so.
func PreviewComment(p *Preview, limit int) string {
	head := previewHead(p)
	var entries []string
	if p.Plan != nil {
		for _, e := range p.Plan.Entries {
			if e.Action != syncv1.ActionUnchanged {
				entries = append(entries, previewEntry(e))
			}
		}
	}
	tail := "\n_Planned with a server-side dry-run as the Application's service account; nothing was applied._\n"

	total := utf8.RuneCountInString(head) + utf8.RuneCountInString(tail)
	for _, e := range entries {
		total += utf8.RuneCountInString(e)
	}
	if total <= limit {
		return head + strings.Join(entries, "") + tail
	}
	// Leave out entries from the end until the rest and the note fit.
	for n := len(entries); n >= 0; n-- {
		note := fmt.Sprintf(truncatedNote, leftOut(len(entries)-n, false), limit)
		size := utf8.RuneCountInString(head) + utf8.RuneCountInString(note)
		for _, e := range entries[:n] {
			size += utf8.RuneCountInString(e)
		}
		if size <= limit {
			return head + strings.Join(entries[:n], "") + note
		}
	}
	// Even the head does not fit: cut it, keeping the marker line first.
	note := fmt.Sprintf(truncatedNote, leftOut(len(entries), true), limit)
	return cutRunes(head, limit-utf8.RuneCountInString(note), "") + note
}

// leftOut says what a truncated comment does not show.
func leftOut(entries int, headCut bool) string {
	var parts []string
	if headCut {
		parts = append(parts, "the text above was cut")
	}
	if entries > 0 {
		parts = append(parts, fmt.Sprintf("%d more plan entr%s not shown", entries, map[bool]string{true: "y", false: "ies"}[entries == 1]))
	}
	return strings.Join(parts, " and ")
}

func previewHead(p *Preview) string {
	var b strings.Builder
	b.WriteString(PreviewMarker(p.Application) + "\n")
	verdict := map[PreviewState]string{PreviewPending: "planning…", PreviewSuccess: "planned", PreviewFailure: "plan failed"}[p.State]
	fmt.Fprintf(&b, "### Kuvryn Sync preview of %s: %s\n\n", code(p.Application.Namespace+"/"+p.Application.Name), verdict)
	fmt.Fprintf(&b, "Commit %s · Revision %s · preview %s", code(shortCommit(p.Commit)), code(p.Revision), code(p.Name))
	if p.NewApplication {
		b.WriteString(" · a new Application")
	}
	b.WriteString("\n\n")
	if p.Plan != nil {
		fmt.Fprintf(&b, "**Plan:** %s (digest %s)\n\n", Summary(p.Plan.Summary), code(p.Plan.Digest))
	}
	if p.State == PreviewFailure {
		fmt.Fprintf(&b, "**Failed:** %s: %s\n\n", escape(p.Reason), escape(p.Message))
		if d := p.Diagnosis; d != nil && (d.Summary != "" || len(d.Causes) > 0) {
			b.WriteString("**Diagnosis:**")
			if d.Summary != "" {
				b.WriteString(" " + escape(d.Summary))
			}
			b.WriteString("\n")
			for _, c := range d.Causes {
				var links []string
				for _, l := range c.Chain {
					links = append(links, object(l.ObjectRef)+": "+escape(l.Message))
				}
				b.WriteString("- " + strings.Join(links, " → ") + "\n")
			}
			if d.Truncated {
				b.WriteString("- _more causes were left out_\n")
			}
			b.WriteString("\n")
		}
	}
	if len(p.Withheld) > 0 {
		b.WriteString("**Withheld from this preview:**\n")
		for _, w := range p.Withheld {
			b.WriteString("- " + code(w) + "\n")
		}
		b.WriteString("\n")
	}
	if p.Plan != nil && p.Plan.Truncated {
		fmt.Fprintf(&b, "_The plan lists only its first %d entries._\n\n", len(p.Plan.Entries))
	}
	return b.String()
}

func previewEntry(e syncv1.PlanEntry) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#### %s %s\n", e.Action, object(e.ObjectRef))
	if e.Diff != "" {
		fence := strings.Repeat("`", max(3, longestRun(e.Diff, '`')+1))
		fmt.Fprintf(&b, "%sdiff\n%s\n%s\n", fence, strings.TrimRight(e.Diff, "\n"), fence)
		if e.DiffTruncated {
			b.WriteString("_diff truncated_\n")
		}
	}
	b.WriteString("\n")
	return b.String()
}

// object names an object as ksync does: Kind namespace/name, in code spans.
func object(o syncv1.ObjectRef) string {
	name := o.Name
	if o.Namespace != "" {
		name = o.Namespace + "/" + name
	}
	return code(o.Kind) + " " + code(name)
}

// code is s in an inline code span, whose content Markdown shows as it is:
// the fence is longer than any run of backticks in s.
func code(s string) string {
	s = oneLine(s)
	if s == "" {
		return "` `"
	}
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// escape makes s plain text on one line: every ASCII punctuation character
// Markdown or HTML could read as syntax is backslash-escaped.
func escape(s string) string {
	var b strings.Builder
	for _, r := range oneLine(s) {
		if strings.ContainsRune("\\`*_{}[]()<>#+-.!|~&@", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func oneLine(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' || r == '\t' }), " ")
}

func longestRun(s string, c rune) int {
	longest, run := 0, 0
	for _, r := range s {
		if r == c {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}

// cutRunes keeps at most n runes of s, the last of them suffix when s was cut.
func cutRunes(s string, n int, suffix string) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	keep := max(n-utf8.RuneCountInString(suffix), 0)
	i := 0
	for pos := range s {
		if i == keep {
			return s[:pos] + suffix
		}
		i++
	}
	return s + suffix
}
