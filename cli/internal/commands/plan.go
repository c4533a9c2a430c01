package commands

import (
	"fmt"

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
}

func planCommand(e *env) *cli.Command {
	formats := []string{outputTable, outputJSON, outputYAML}
	return &cli.Command{
		Name:      "plan",
		Usage:     "print the redacted plan of an Application's desired Revision",
		ArgsUsage: "<application>",
		Flags: append(clusterFlags(),
			revisionFlag("Revision to show (default status.desiredRevision)"),
			outputFlag(formats...),
		),
		BashComplete: e.completeApplications,
		Action: func(c *cli.Context) error {
			format, err := output(c, formats...)
			if err != nil {
				return err
			}
			_, app, rev, err := e.revision(c)
			if err != nil {
				return err
			}
			if rev.Status.Plan == nil || rev.Status.Plan.Digest == "" {
				return noPlanError(rev)
			}
			plan, hidden := printers.ConcealSecretValues(*rev.Status.Plan)
			if hidden > 0 {
				fmt.Fprintf(e.errOut, "ksync: warning: hid %d Secret value(s) that the plan of Revision %s/%s shows unredacted\n", hidden, rev.Namespace, rev.Name)
			}
			if format != outputTable {
				return e.encode(format, planExport{
					Namespace: app.Namespace, Application: app.Name, Revision: rev.Name, Phase: rev.Status.Phase, Plan: plan,
				})
			}
			return printers.Plan(e.out, rev.Name, plan, e.printOptions(false, false))
		},
	}
}

func noPlanError(rev *syncv1.Revision) error {
	phase := rev.Status.Phase
	if phase == "" {
		phase = "not yet reported"
	}
	return fmt.Errorf("Revision %s/%s has no plan yet (status.plan is empty, phase %s); the sync-controller plans it after rendering", rev.Namespace, rev.Name, phase)
}
