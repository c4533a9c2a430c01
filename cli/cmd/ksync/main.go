// Command ksync is the day-two CLI of Kuvryn Sync.
package main

import (
	"os"

	"github.com/kuvryn/kuvryn-sync/cli/internal/commands"
)

func main() {
	os.Exit(commands.Run(os.Args, os.Stdout, os.Stderr))
}
