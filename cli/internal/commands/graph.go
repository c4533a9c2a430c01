package commands

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/kuvryn/kuvryn-sync/pkg/graph"
)

const outputDOT = "dot"

// graphExport is `ksync graph -o json`.
type graphExport struct {
	Namespace   string `json:"namespace"`
	Application string `json:"application"`
	Revision    string `json:"revision"`
	*graph.Graph
}

func graphCommand(e *env) *cli.Command {
	formats := []string{outputTable, outputJSON, outputDOT}
	return &cli.Command{
		Name:      "graph",
		Usage:     "print an Application's live resource graph as a text tree, JSON or DOT, read with your own permissions",
		ArgsUsage: "<application>",
		Flags: append(clusterFlags(),
			revisionFlag("Revision whose inventory to start from (default status.desiredRevision, else status.deployedRevision)"),
			outputFlag(formats...),
		),
		BashComplete: e.completeApplications,
		Action: func(c *cli.Context) error {
			format, err := output(c, formats...)
			if err != nil {
				return err
			}
			k8s, app, err := e.application(c)
			if err != nil {
				return err
			}
			name := c.String(flagRevision)
			if name == "" && app.Status.DesiredRevision == "" {
				name = app.Status.DeployedRevision
			}
			rev, err := getRevision(c.Context, k8s, app, name)
			if err != nil {
				return err
			}
			if inv := rev.Status.Inventory; (inv == nil || len(inv.Entries) == 0) && c.String(flagRevision) == "" && app.Status.DeployedRevision != "" && app.Status.DeployedRevision != rev.Name {
				if rev, err = getRevision(c.Context, k8s, app, app.Status.DeployedRevision); err != nil {
					return err
				}
			}
			roots := graph.RootsOf(rev)
			if len(roots) == 0 {
				return fmt.Errorf("Revision %s/%s has applied nothing yet (status.inventory is empty); the graph starts from the objects a rollout applied", rev.Namespace, rev.Name)
			}
			snap, err := graph.Collect(c.Context, k8s, app.DestinationNamespace(), roots)
			if err != nil {
				return fmt.Errorf("reading the live objects of Application %s/%s: %w", app.Namespace, app.Name, err)
			}
			g := graph.Build(snap)
			switch format {
			case outputJSON:
				return e.encode(format, graphExport{Namespace: app.Namespace, Application: app.Name, Revision: rev.Name, Graph: g})
			case outputDOT:
				return graph.WriteDOT(e.out, g)
			}
			fmt.Fprintf(e.out, "Application %s/%s, Revision %s:\n", app.Namespace, app.Name, rev.Name)
			return graph.WriteText(e.out, g)
		},
	}
}
