package commands

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/cli/internal/kube"
	"github.com/kuvryn/kuvryn-sync/cli/internal/printers"
)

// Flag names shared by the commands.
const (
	flagKubeconfig    = "kubeconfig"
	flagContext       = "context"
	flagNamespace     = "namespace"
	flagAllNamespaces = "all-namespaces"
	flagOutput        = "output"
	flagRevision      = "revision"
	flagYes           = "yes"
	flagTimeout       = "timeout"
	flagRef           = "ref"
)

// Output formats of -o.
const (
	outputTable = "table"
	outputWide  = "wide"
	outputJSON  = "json"
	outputYAML  = "yaml"
)

// clusterFlags are kubectl's connection flags.
func clusterFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: flagKubeconfig, Usage: "kubeconfig file (default $KUBECONFIG, else ~/.kube/config)", TakesFile: true},
		&cli.StringFlag{Name: flagContext, Usage: "kubeconfig context (default the current context)"},
		&cli.StringFlag{Name: flagNamespace, Aliases: []string{"n"}, Usage: "namespace (default the context's namespace)"},
	}
}

func allNamespacesFlag() cli.Flag {
	return &cli.BoolFlag{Name: flagAllNamespaces, Aliases: []string{"A"}, Usage: "list across all namespaces"}
}

func outputFlag(formats ...string) cli.Flag {
	return &cli.StringFlag{Name: flagOutput, Aliases: []string{"o"}, Value: outputTable, Usage: "output format: " + strings.Join(formats, ", ")}
}

func yesFlag() cli.Flag {
	return &cli.BoolFlag{Name: flagYes, Aliases: []string{"y"}, Usage: "do not ask for confirmation"}
}

// output returns -o, refusing a format the command does not offer.
func output(c *cli.Context, formats ...string) (string, error) {
	o := c.String(flagOutput)
	if !slices.Contains(formats, o) {
		return "", usageError{fmt.Errorf("unsupported output format %q for %s; use one of: %s", o, c.Command.Name, strings.Join(formats, ", "))}
	}
	return o, nil
}

// applicationArg returns the single Application name a command takes.
func applicationArg(c *cli.Context) (string, error) {
	if c.NArg() != 1 {
		return "", usageError{fmt.Errorf("%s takes exactly one Application name, got %d arguments; see 'ksync %s --help'", c.Command.Name, c.NArg(), c.Command.Name)}
	}
	return c.Args().First(), nil
}

// connect builds the API client and resolves the namespace from the flags.
func (e *env) connect(c *cli.Context) (client.Client, string, error) {
	return kube.New(kube.Options{
		Kubeconfig: c.String(flagKubeconfig),
		Context:    c.String(flagContext),
		Namespace:  c.String(flagNamespace),
		UserAgent:  "ksync/" + Version,
		Warnings:   e.errOut,
	})
}

func (e *env) printOptions(allNamespaces, wide bool) printers.Options {
	return printers.Options{
		AllNamespaces: allNamespaces,
		Wide:          wide,
		Color:         printers.ColorEnabled(e.out, e.lookupEnv),
		Now:           e.now(),
	}
}

// application takes the command's one Application name, connects and reads
// that Application: the first step of every command about one Application.
func (e *env) application(c *cli.Context) (client.Client, *syncv1.Application, error) {
	name, err := applicationArg(c)
	if err != nil {
		return nil, nil, err
	}
	k8s, namespace, err := e.connect(c)
	if err != nil {
		return nil, nil, err
	}
	app, err := getApplication(c.Context, k8s, namespace, name)
	return k8s, app, err
}

// revision reads the command's Application and its Revision named by
// --revision, else its desired one.
func (e *env) revision(c *cli.Context) (client.Client, *syncv1.Application, *syncv1.Revision, error) {
	k8s, app, err := e.application(c)
	if err != nil {
		return nil, nil, nil, err
	}
	rev, err := getRevision(c.Context, k8s, app, c.String(flagRevision))
	return k8s, app, rev, err
}

func revisionFlag(usage string) cli.Flag {
	return &cli.StringFlag{Name: flagRevision, Usage: usage}
}

func getApplication(ctx context.Context, k8s client.Client, namespace, name string) (*syncv1.Application, error) {
	app := &syncv1.Application{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, app); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("Application %s/%s not found", namespace, name)
		}
		return nil, fmt.Errorf("reading Application %s/%s: %w", namespace, name, err)
	}
	return app, nil
}

// getRevision reads the Revision name of app: the --revision flag if set,
// else status.desiredRevision. It refuses a Revision of another Application.
func getRevision(ctx context.Context, k8s client.Client, app *syncv1.Application, name string) (*syncv1.Revision, error) {
	source := "--revision"
	if name == "" {
		name, source = app.Status.DesiredRevision, "status.desiredRevision"
		if name == "" {
			return nil, fmt.Errorf("Application %s/%s has no desired Revision yet (status.desiredRevision is empty); see 'kubectl describe applications.sync.kuvryn.io -n %s %s'",
				app.Namespace, app.Name, app.Namespace, app.Name)
		}
	}
	rev := &syncv1.Revision{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: app.Namespace, Name: name}, rev); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("Revision %s/%s (%s of Application %s) not found", app.Namespace, name, source, app.Name)
		}
		return nil, fmt.Errorf("reading Revision %s/%s: %w", app.Namespace, name, err)
	}
	if !rev.BelongsTo(client.ObjectKeyFromObject(app)) {
		return nil, fmt.Errorf("Revision %s/%s belongs to Application %s, not %s", app.Namespace, name, rev.Spec.ApplicationName, app.Name)
	}
	return rev, nil
}

// encode writes v as JSON or YAML.
func (e *env) encode(format string, v any) error {
	if format == outputYAML {
		return printers.YAML(e.out, v)
	}
	return printers.JSON(e.out, v)
}

// scope names where a list looked, for messages.
func scope(namespace string, all bool) string {
	if all {
		return "any namespace"
	}
	return "namespace " + namespace
}
