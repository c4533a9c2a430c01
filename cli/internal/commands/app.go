// Package commands holds the ksync commands.
package commands

import (
	"errors"
	"fmt"
	"io"

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

// Run runs ksync with args (including the program name) and returns the exit code.
func Run(args []string, stdout, stderr io.Writer) int {
	var unknown string
	app := &cli.App{
		Name:                 "ksync",
		Usage:                "day-two commands for Kuvryn Sync",
		Writer:               stdout,
		ErrWriter:            stderr,
		EnableBashCompletion: true,
		HideVersion:          true,
		OnUsageError:         onUsageError,
		CommandNotFound:      func(_ *cli.Context, name string) { unknown = name },
		Commands: []*cli.Command{
			versionCommand(),
		},
	}
	for _, c := range app.Commands {
		c.OnUsageError = onUsageError
	}
	err := app.Run(args)
	if err == nil && unknown != "" {
		err = usageError{fmt.Errorf("unknown command %q; see 'ksync help'", unknown)}
	}
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "ksync: %v\n", err)
	var u usageError
	if errors.As(err, &u) {
		return exitUsage
	}
	return exitFailed
}

func onUsageError(_ *cli.Context, err error, _ bool) error { return usageError{err} }

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
