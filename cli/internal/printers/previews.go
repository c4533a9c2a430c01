package printers

import (
	"fmt"
	"io"
	"strings"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// Previews writes the table of `ksync previews`, one row per entry of each
// Repository's status.previews in status order: REPOSITORY, NAME, REF,
// COMMIT (12 characters), STATE, APPLICATIONS, AGE (since the newest
// request) and MESSAGE (the state's message, or when a closed preview
// closed).
func Previews(w io.Writer, repos []syncv1.Repository, o Options) error {
	t := Table{Header: []string{"REPOSITORY", "NAME", "REF", "COMMIT", "STATE", "APPLICATIONS", "AGE", "MESSAGE"}}
	if o.AllNamespaces {
		t.Header = append([]string{"NAMESPACE"}, t.Header...)
	}
	for _, repo := range repos {
		for _, p := range repo.Status.Previews {
			msg := p.Message
			if msg == "" && p.ClosedAt != nil {
				msg = "closed " + Age(*p.ClosedAt, o.Now) + " ago"
			}
			row := []Cell{
				Plain(repo.Name),
				Plain(p.Name),
				Plain(p.Ref),
				Plain(ShortCommit(p.Commit)),
				previewStateCell(p.State),
				Plain(strings.Join(p.Applications, ",")),
				Plain(Age(p.RequestedAt, o.Now)),
				Plain(msg),
			}
			if o.AllNamespaces {
				row = append([]Cell{Plain(repo.Namespace)}, row...)
			}
			t.Add(row...)
		}
	}
	return t.Write(w, o.Color)
}

// PreviewRevisions writes the table of `ksync previews -o wide`'s preview
// Revisions: REPOSITORY, PREVIEW, APPLICATION, REVISION, COMMIT, PHASE and
// SUMMARY (the plan's, else the failure's reason).
func PreviewRevisions(w io.Writer, revs []syncv1.Revision, o Options) error {
	t := Table{Header: []string{"REPOSITORY", "PREVIEW", "APPLICATION", "REVISION", "COMMIT", "PHASE", "SUMMARY"}}
	if o.AllNamespaces {
		t.Header = append([]string{"NAMESPACE"}, t.Header...)
	}
	for i := range revs {
		rev := &revs[i]
		p := rev.Spec.Preview
		if p == nil {
			continue
		}
		row := []Cell{
			Plain(p.Repository),
			Plain(p.Name),
			Plain(rev.Spec.ApplicationName),
			Plain(rev.Name),
			Plain(ShortCommit(p.Commit)),
			phaseCell(rev.Status.Phase),
			Plain(revisionSummary(rev)),
		}
		if o.AllNamespaces {
			row = append([]Cell{Plain(rev.Namespace)}, row...)
		}
		t.Add(row...)
	}
	return t.Write(w, o.Color)
}

// PreviewResult writes the result of `ksync plan --ref`: which preview and
// commit the Revision plans and what its render withheld, then the plan as
// Plan writes it, or, for a Revision that failed, its failure and
// diagnosis. Callers pass a plan that went through ConcealSecretValues.
func PreviewResult(w io.Writer, rev *syncv1.Revision, plan syncv1.Plan, o Options) error {
	var b strings.Builder
	if p := rev.Spec.Preview; p != nil {
		fmt.Fprintf(&b, "Preview:   %s (%s)\n", Sanitize(p.Name), Sanitize(p.Ref))
		fmt.Fprintf(&b, "Commit:    %s\n", Sanitize(p.Commit))
		for _, wh := range p.Withheld {
			fmt.Fprintf(&b, "Withheld:  %s\n", Sanitize(wh))
		}
	}
	if rev.Status.Phase == syncv1.PhaseFailed {
		fmt.Fprintf(&b, "Revision:  %s (%s)\n", Sanitize(rev.Name), Colorize(string(rev.Status.Phase), Red, o.Color))
		causes(&b, rev, "Failure:   ", "Diagnosis: ", o)
		_, err := io.WriteString(w, b.String())
		return err
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	return Plan(w, rev.Name, plan, o)
}

func revisionSummary(rev *syncv1.Revision) string {
	if f := Failure(rev); f != nil {
		return f.Reason + ": " + f.Message
	}
	if p := rev.Status.Plan; p != nil && p.Digest != "" {
		return Summary(p.Summary)
	}
	return ""
}

func previewStateCell(s syncv1.PreviewState) Cell {
	switch s {
	case syncv1.PreviewRendered:
		return Cell{Text: string(s), Color: Green}
	case syncv1.PreviewQueued:
		return Cell{Text: string(s), Color: Yellow}
	case syncv1.PreviewRefused, syncv1.PreviewFailed:
		return Cell{Text: string(s), Color: Red}
	}
	return Plain(string(s))
}
