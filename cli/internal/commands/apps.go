package commands

import (
	"fmt"
	"io"
	"sort"

	"github.com/urfave/cli/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/cli/internal/printers"
)

func appsCommand(e *env) *cli.Command {
	return listCommand(e, listing[syncv1.Application, *syncv1.Application]{
		name: "apps", alias: "applications", kind: "Application", plural: "Applications",
		usage: "list Applications: sync state, health, phase, desired and deployed Revision",
		list: func(c *cli.Context, k8s client.Client, opts []client.ListOption) ([]syncv1.Application, error) {
			l := &syncv1.ApplicationList{}
			err := k8s.List(c.Context, l, opts...)
			return l.Items, err
		},
		wrap: func(items []syncv1.Application) any {
			return &syncv1.ApplicationList{TypeMeta: listTypeMeta("ApplicationList"), Items: items}
		},
		print: printers.Applications,
	})
}

func reposCommand(e *env) *cli.Command {
	return listCommand(e, listing[syncv1.Repository, *syncv1.Repository]{
		name: "repos", alias: "repositories", kind: "Repository", plural: "Repositories",
		usage: "list Repositories: URL, revision, fetched commit, Ready",
		list: func(c *cli.Context, k8s client.Client, opts []client.ListOption) ([]syncv1.Repository, error) {
			l := &syncv1.RepositoryList{}
			err := k8s.List(c.Context, l, opts...)
			return l.Items, err
		},
		wrap: func(items []syncv1.Repository) any {
			return &syncv1.RepositoryList{TypeMeta: listTypeMeta("RepositoryList"), Items: items}
		},
		print: printers.Repositories,
	})
}

// listing describes one list command over the kind T.
type listing[T any, P interface {
	*T
	client.Object
}] struct {
	name, alias, kind, plural, usage string
	list                             func(*cli.Context, client.Client, []client.ListOption) ([]T, error)
	wrap                             func([]T) any
	print                            func(io.Writer, []T, printers.Options) error
}

// listCommand lists one kind in a namespace or, with -A, in all of them,
// sorted by namespace and name, as a table or as a JSON/YAML List.
func listCommand[T any, P interface {
	*T
	client.Object
}](e *env, l listing[T, P]) *cli.Command {
	formats := []string{outputTable, outputWide, outputJSON, outputYAML}
	return &cli.Command{
		Name:      l.name,
		Aliases:   []string{l.alias},
		Usage:     l.usage,
		ArgsUsage: " ",
		Flags:     append(clusterFlags(), allNamespacesFlag(), outputFlag(formats...)),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageError{fmt.Errorf("%s takes no arguments, got %q; use -n or -A to choose namespaces", l.name, c.Args().Slice())}
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
			var opts []client.ListOption
			if !all {
				opts = append(opts, client.InNamespace(namespace))
			}
			items, err := l.list(c, k8s, opts)
			if err != nil {
				return fmt.Errorf("listing %s in %s: %w", l.plural, scope(namespace, all), err)
			}
			sort.Slice(items, func(i, j int) bool {
				a, b := P(&items[i]), P(&items[j])
				return a.GetNamespace() < b.GetNamespace() || (a.GetNamespace() == b.GetNamespace() && a.GetName() < b.GetName())
			})

			switch format {
			case outputJSON, outputYAML:
				for i := range items {
					o := P(&items[i])
					o.GetObjectKind().SetGroupVersionKind(syncv1.GroupVersion.WithKind(l.kind))
					o.SetManagedFields(nil)
				}
				return e.encode(format, l.wrap(items))
			}
			if len(items) == 0 {
				fmt.Fprintf(e.errOut, "No %s found in %s.\n", l.plural, scope(namespace, all))
				return nil
			}
			return l.print(e.out, items, e.printOptions(all, format == outputWide))
		},
	}
}

func listTypeMeta(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: syncv1.GroupVersion.String(), Kind: kind}
}
