package commands

import (
	"fmt"
	"sort"

	"github.com/urfave/cli/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/cli/internal/printers"
)

func appsCommand(e *env) *cli.Command {
	formats := []string{outputTable, outputWide, outputJSON, outputYAML}
	return &cli.Command{
		Name:      "apps",
		Aliases:   []string{"applications"},
		Usage:     "list Applications: sync state, health, phase, desired and deployed Revision",
		ArgsUsage: " ",
		Flags:     append(clusterFlags(), allNamespacesFlag(), outputFlag(formats...)),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageError{fmt.Errorf("apps takes no arguments, got %q; use -n or -A to choose namespaces", c.Args().Slice())}
			}
			format, err := output(c, formats...)
			if err != nil {
				return err
			}
			k8s, namespace, err := e.connect(c)
			if err != nil {
				return err
			}
			all := c.Bool(flagAllNamespaces)
			list := &syncv1.ApplicationList{}
			var opts []client.ListOption
			if !all {
				opts = append(opts, client.InNamespace(namespace))
			}
			if err := k8s.List(c.Context, list, opts...); err != nil {
				return fmt.Errorf("listing Applications in %s: %w", scope(namespace, all), err)
			}
			sort.Slice(list.Items, func(i, j int) bool {
				a, b := list.Items[i], list.Items[j]
				return a.Namespace < b.Namespace || (a.Namespace == b.Namespace && a.Name < b.Name)
			})

			switch format {
			case outputJSON, outputYAML:
				list.SetGroupVersionKind(syncv1.GroupVersion.WithKind("ApplicationList"))
				for i := range list.Items {
					list.Items[i].SetGroupVersionKind(syncv1.GroupVersion.WithKind("Application"))
					list.Items[i].ManagedFields = nil
				}
				return e.encode(format, list)
			}
			if len(list.Items) == 0 {
				fmt.Fprintf(e.errOut, "No Applications found in %s.\n", scope(namespace, all))
				return nil
			}
			return printers.Applications(e.out, list.Items, e.printOptions(all, format == outputWide))
		},
	}
}
