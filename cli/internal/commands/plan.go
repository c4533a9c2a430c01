package commands

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/cli/internal/printers"
)

// planExport is `ksync plan -o json|yaml`.
type planExport struct {
	Namespace   string               `json:"namespace"`
	Application string               `json:"application"`
	Revision    string               `json:"revision"`
	Phase       syncv1.RevisionPhase `json:"phase,omitempty"`
	Plan        syncv1.Plan          `json:"plan"`
	// Preview is set for `ksync plan --ref`.
	Preview *syncv1.RevisionPreview `json:"preview,omitempty"`
}

func planCommand(e *env) *cli.Command {
	formats := []string{outputTable, outputJSON, outputYAML}
	return &cli.Command{
		Name:      "plan",
		Usage:     "print the redacted plan of an Application's desired Revision, or of a pull request or branch with --ref",
		ArgsUsage: "<application>",
		Description: "With --ref, asks for a preview of a pull request (GitHub) or merge request (GitLab) by number, or of\n" +
			"a branch, by the annotation " + syncv1.PreviewRequestAnnotationPrefix + "<name> on the Application's Repository,\n" +
			"waits until the Application's preview Revision for the preview's current commit is planned or failed,\n" +
			"and prints it. A preview only plans with dry-runs: it never changes the cluster.",
		Flags: append(clusterFlags(),
			revisionFlag("Revision to show (default status.desiredRevision)"),
			&cli.StringFlag{Name: flagRef, Usage: "preview this pull or merge request number, or this branch, instead of the desired Revision"},
			&cli.DurationFlag{Name: flagTimeout, Value: 5 * time.Minute, Usage: "with --ref, how long to wait for the preview's plan"},
			outputFlag(formats...),
		),
		BashComplete: e.completeApplications,
		Action: func(c *cli.Context) error {
			format, err := output(c, formats...)
			if err != nil {
				return err
			}
			if ref := c.String(flagRef); ref != "" {
				if c.String(flagRevision) != "" {
					return usageError{fmt.Errorf("plan takes --ref or --revision, not both")}
				}
				return e.planPreview(c, ref, format)
			}
			_, app, rev, err := e.revision(c)
			if err != nil {
				return err
			}
			if rev.Status.Plan == nil || rev.Status.Plan.Digest == "" {
				return noPlanError(rev)
			}
			plan := e.conceal(rev)
			if format != outputTable {
				return e.encode(format, planExport{
					Namespace: app.Namespace, Application: app.Name, Revision: rev.Name, Phase: rev.Status.Phase, Plan: plan,
				})
			}
			return printers.Plan(e.out, rev.Name, plan, e.printOptions(false, false))
		},
	}
}

// conceal is the Revision's plan with any Secret value the sync-controller
// failed to redact hidden, warning when it hid one.
func (e *env) conceal(rev *syncv1.Revision) syncv1.Plan {
	if rev.Status.Plan == nil {
		return syncv1.Plan{}
	}
	plan, hidden := printers.ConcealSecretValues(*rev.Status.Plan)
	if hidden > 0 {
		fmt.Fprintf(e.errOut, "ksync: warning: hid %d Secret value(s) that the plan of Revision %s/%s shows unredacted\n", hidden, rev.Namespace, rev.Name)
	}
	return plan
}

func noPlanError(rev *syncv1.Revision) error {
	phase := rev.Status.Phase
	if phase == "" {
		phase = "not yet reported"
	}
	return fmt.Errorf("Revision %s/%s has no plan yet (status.plan is empty, phase %s); the sync-controller plans it after rendering", rev.Namespace, rev.Name, phase)
}
