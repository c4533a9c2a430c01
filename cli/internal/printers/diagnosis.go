package printers

import (
	"fmt"
	"io"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// Failure is the latest deterministic failure of a Revision: the first of
// its rollout, health, plan and render conditions that is False for a
// reason other than waiting.
func Failure(rev *syncv1.Revision) *metav1.Condition {
	waiting := map[string]bool{syncv1.ReasonProgressing: true, syncv1.ReasonAwaitingApproval: true, syncv1.ReasonSucceeded: true}
	for _, t := range []string{syncv1.ConditionRolloutComplete, syncv1.ConditionHealthy, syncv1.ConditionPlanned, syncv1.ConditionRendered} {
		for i := range rev.Status.Conditions {
			c := &rev.Status.Conditions[i]
			if c.Type == t && c.Status == metav1.ConditionFalse && !waiting[c.Reason] {
				return c
			}
		}
	}
	return nil
}

// Diagnosis writes an Application's health, the latest failure of its
// Revision and each causal chain of status.diagnosis as an indented chain,
// the root cause last and, on a terminal, in red.
func Diagnosis(w io.Writer, app *syncv1.Application, rev *syncv1.Revision, o Options) error {
	var b strings.Builder
	health := string(app.Status.Health)
	if health == "" {
		health = "not yet reported"
	}
	phase := string(rev.Status.Phase)
	if phase == "" {
		phase = "not yet reported"
	}
	fmt.Fprintf(&b, "Application:  %s/%s\n", Sanitize(app.Namespace), Sanitize(app.Name))
	fmt.Fprintf(&b, "Health:       %s\n", Colorize(Sanitize(health), healthCell(app.Status.Health).Color, o.Color))
	fmt.Fprintf(&b, "Revision:     %s (%s)\n", Sanitize(rev.Name), Sanitize(phase))
	causes(&b, rev, "Failure:      ", "Diagnosis:    ", o)
	_, err := io.WriteString(w, b.String())
	return err
}

// causes writes a Revision's latest failure and each causal chain of its
// status.diagnosis, the labels padded by the caller's layout.
func causes(b *strings.Builder, rev *syncv1.Revision, failureLabel, diagnosisLabel string, o Options) {
	if f := Failure(rev); f != nil {
		fmt.Fprintf(b, "%s%s %s: %s\n", failureLabel, Sanitize(f.Type), Colorize(Sanitize(f.Reason), Red, o.Color), Sanitize(f.Message))
	}
	d := rev.Status.Diagnosis
	if d == nil || len(d.Causes) == 0 {
		b.WriteString(diagnosisLabel + "none (status.diagnosis is empty: nothing was found wrong, or the Revision was not diagnosed)\n")
		return
	}
	fmt.Fprintf(b, "%s%s\n", diagnosisLabel, Sanitize(d.Summary))
	for i, c := range d.Causes {
		fmt.Fprintf(b, "\nCause %d of %d:\n", i+1, len(d.Causes))
		for j, l := range c.Chain {
			indent := strings.Repeat("   ", j)
			lead := "  "
			if j > 0 {
				lead = "  " + indent[3:] + "└─ "
			}
			name := Sanitize(refName(l.ObjectRef))
			msg := Sanitize(l.Message)
			if j == len(c.Chain)-1 {
				name, msg = Colorize(name, Red, o.Color), Colorize(msg, Red, o.Color)
			}
			fmt.Fprintf(b, "%s%s\n", lead, name)
			fmt.Fprintf(b, "  %s   %s\n", indent, msg)
		}
	}
	if d.Truncated {
		b.WriteString("\n(diagnosis truncated: a bound on reads or on status.diagnosis left some out)\n")
	}
}

// refName names an object as kubectl users read it: "Deployment.apps shop/web".
func refName(r syncv1.ObjectRef) string {
	kind := r.Kind
	if r.Group != "" {
		kind += "." + r.Group
	}
	return kind + " " + objectName(r)
}
