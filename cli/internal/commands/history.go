package commands

import (
	"fmt"

	"github.com/urfave/cli/v2"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/cli/internal/printers"
)

// historyExport is `ksync history -o json|yaml`: the retained attempts,
// newest first, each with its approval record.
type historyExport struct {
	Namespace        string                `json:"namespace"`
	Application      string                `json:"application"`
	DesiredRevision  string                `json:"desiredRevision,omitempty"`
	DeployedRevision string                `json:"deployedRevision,omitempty"`
	History          []syncv1.HistoryEntry `json:"history"`
}

func historyCommand(e *env) *cli.Command {
	formats := []string{outputTable, outputWide, outputJSON, outputYAML}
	return &cli.Command{
		Name:         "history",
		Usage:        "list an Application's retained deployment attempts, with approvals",
		ArgsUsage:    "<application>",
		Flags:        append(clusterFlags(), outputFlag(formats...)),
		BashComplete: e.completeApplications,
		Action: func(c *cli.Context) error {
			format, err := output(c, formats...)
			if err != nil {
				return err
			}
			_, app, err := e.application(c)
			if err != nil {
				return err
			}
			switch format {
			case outputJSON, outputYAML:
				entries := app.Status.History
				if entries == nil {
					entries = []syncv1.HistoryEntry{}
				}
				return e.encode(format, historyExport{
					Namespace:        app.Namespace,
					Application:      app.Name,
					DesiredRevision:  app.Status.DesiredRevision,
					DeployedRevision: app.Status.DeployedRevision,
					History:          entries,
				})
			}
			if len(app.Status.History) == 0 {
				fmt.Fprintf(e.errOut, "Application %s/%s has no deployment history yet.\n", app.Namespace, app.Name)
				return nil
			}
			return printers.History(e.out, app.Status.History, e.printOptions(false, format == outputWide))
		},
	}
}
