// Package commands holds the ksync commands.
package commands

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
)

// Version is set at build time with -ldflags "-X ...commands.Version=...".
var Version = "dev"

// Exit codes: 0 success, 1 a failed operation, 2 bad usage.
const (
	exitFailed = 1
	exitUsage  = 2
)

// usageError marks errors caused by how ksync was called.
type usageError struct{ error }

// env is what one run of ksync reads and writes; tests replace its parts.
type env struct {
	// args of this run, as given, for shell completion.
	args      []string
	in        io.Reader
	out       io.Writer
	errOut    io.Writer
	now       func() time.Time
	lookupEnv func(string) (string, bool)
}

// Run runs ksync with args (including the program name) and returns the exit code.
func Run(args []string, stdout, stderr io.Writer) int {
	return run(args, &env{in: os.Stdin, out: stdout, errOut: stderr, now: time.Now, lookupEnv: os.LookupEnv})
}

func run(args []string, e *env) int {
	e.args = args
	var unknown string
	app := &cli.App{
		Name:                 "ksync",
		Usage:                "day-two commands for Kuvryn Sync",
		Writer:               e.out,
		ErrWriter:            e.errOut,
		EnableBashCompletion: true,
		BashComplete:         completeCommands,
		HideVersion:          true,
		OnUsageError:         onUsageError,
		CommandNotFound:      func(_ *cli.Context, name string) { unknown = name },
		Commands: []*cli.Command{
			appsCommand(e),
			reposCommand(e),
			planCommand(e),
			previewsCommand(e),
			historyCommand(e),
			diagnoseCommand(e),
			graphCommand(e),
			approveCommand(e),
			rollbackCommand(e),
			completionCommand(),
			versionCommand(),
		},
	}
	for _, c := range app.Commands {
		c.OnUsageError = onUsageError
	}
	err := app.Run(interspersed(app, args))
	if err == nil && unknown != "" {
		err = usageError{fmt.Errorf("unknown command %q; see 'ksync help'", unknown)}
	}
	if err == nil {
		return 0
	}
	fmt.Fprintf(e.errOut, "ksync: %v\n", err)
	var u usageError
	if errors.As(err, &u) {
		return exitUsage
	}
	return exitFailed
}

func onUsageError(_ *cli.Context, err error, _ bool) error { return usageError{err} }

// interspersed moves a command's flags before its arguments, so that
// `ksync plan api -n payments` works as it does in kubectl: urfave/cli/v2
// stops parsing flags at the first argument. Shell completion requests are
// left alone, since urfave/cli looks for their flag at the very end.
func interspersed(app *cli.App, args []string) []string {
	if len(args) < 3 || args[len(args)-1] == "--generate-bash-completion" {
		return args
	}
	cmd := app.Command(args[1])
	if cmd == nil {
		return args
	}
	takesValue := map[string]bool{}
	for _, f := range cmd.Flags {
		if _, isBool := f.(*cli.BoolFlag); isBool {
			continue
		}
		for _, name := range f.Names() {
			takesValue[name] = true
		}
	}
	flags := []string{args[0], args[1]}
	var positional []string
	rest := args[2:]
	for i := 0; i < len(rest); i++ {
		arg := rest[i]
		if arg == "--" {
			positional = append(positional, rest[i:]...)
			break
		}
		if len(arg) < 2 || arg[0] != '-' {
			positional = append(positional, arg)
			continue
		}
		flags = append(flags, arg)
		if name := strings.TrimLeft(arg, "-"); !strings.Contains(name, "=") && takesValue[name] && i+1 < len(rest) {
			i++
			flags = append(flags, rest[i])
		}
	}
	return append(flags, positional...)
}

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the ksync version",
		Action: func(c *cli.Context) error {
			_, err := fmt.Fprintf(c.App.Writer, "ksync %s\n", Version)
			return err
		},
	}
}
