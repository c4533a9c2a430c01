package commands

import (
	"fmt"

	"github.com/urfave/cli/v2"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/cli/internal/printers"
)

func approveCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "approve",
		Usage:     "approve exactly the current plan of an Application's desired Revision",
		ArgsUsage: "<application>",
		Description: "Shows the plan digest and summary, asks for confirmation, then sets the Application annotations\n" +
			syncv1.ApprovedRevisionAnnotation + " and " + syncv1.ApproveDigestAnnotation + ". The admission webhook\n" +
			"refuses the approval if the plan changed since it was shown.",
		Flags: append(clusterFlags(),
			&cli.StringFlag{Name: flagRevision, Usage: "Revision to approve (default status.desiredRevision)"},
			yesFlag(),
		),
		BashComplete: e.completeApplications,
		Action: func(c *cli.Context) error {
			k8s, app, err := e.application(c)
			if err != nil {
				return err
			}
			rev, err := getRevision(c.Context, k8s, app, c.String(flagRevision))
			if err != nil {
				return err
			}
			plan := rev.Status.Plan
			if plan == nil || plan.Digest == "" {
				return noPlanError(rev)
			}
			if !rev.Status.Phase.TakesApproval() {
				return fmt.Errorf("Revision %s of Application %s/%s is %s and waits for no approval: plan %s has rolled out or is rolling out; nothing approved",
					rev.Name, app.Namespace, app.Name, rev.Status.Phase, printers.Sanitize(plan.Digest))
			}
			fmt.Fprintf(e.out, "Application:  %s/%s\nRevision:     %s\nPlan digest:  %s\nSummary:      %s\n",
				app.Namespace, app.Name, rev.Name, printers.Sanitize(plan.Digest), printers.Summary(plan.Summary))

			if !c.Bool(flagYes) {
				ok, err := e.confirm("Approve this plan?")
				if err != nil {
					return err
				}
				if !ok {
					return fmt.Errorf("approval of Revision %s cancelled; Application %s/%s not changed", rev.Name, app.Namespace, app.Name)
				}
			}
			err = annotateApplication(c.Context, k8s, app, map[string]string{
				syncv1.ApprovedRevisionAnnotation: rev.Name,
				syncv1.ApproveDigestAnnotation:    plan.Digest,
			})
			if msg, refused := refusal(err); refused {
				return fmt.Errorf("approval refused: %s", msg)
			}
			if err != nil {
				return fmt.Errorf("approving Revision %s of Application %s/%s: %w", rev.Name, app.Namespace, app.Name, err)
			}
			fmt.Fprintf(e.out, "Approved Revision %s of Application %s/%s with plan %s.\n", rev.Name, app.Namespace, app.Name, plan.Digest)
			return nil
		},
	}
}
