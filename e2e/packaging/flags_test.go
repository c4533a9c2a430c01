package packaging_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestManifests_PassOnlyFlagsTheServicesAccept runs each service binary
// with its Deployment's arguments and --help last: the binary parses every
// argument before --help and exits non-zero on a flag it does not define.
// The binaries come from `make build` (bin/).
func TestManifests_PassOnlyFlagsTheServicesAccept(t *testing.T) {
	run := func(ctx context.Context, binary string, args []string) (string, error) {
		path := filepath.Join(root, "bin", binary)
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("%s missing: run `make build` first", path)
		}
		out, err := exec.CommandContext(ctx, path, append(args, "--help")...).CombinedOutput()
		return string(out), err
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	for source, deployments := range deploymentSources(t) {
		for _, d := range deployments {
			c := manager(t, d)
			command := stringsAt(t, c, "command")
			if len(command) != 1 {
				t.Errorf("%s: %s command %v, want the service binary alone", source, idOf(d), command)
				continue
			}
			args := stringsAt(t, c, "args")
			if out, err := run(ctx, filepath.Base(command[0]), args); err != nil {
				t.Errorf("%s: %s refuses the args %v: %v\n%s", source, command[0], args, err, lastLine(out))
			}
		}
	}

	t.Run("an undefined flag is refused", func(t *testing.T) {
		if _, err := run(ctx, "web", []string{"--no-such-flag=1"}); err == nil {
			t.Fatal("web accepted --no-such-flag")
		}
	})
}

// lastLine is where a service states why it exits, after its usage text.
func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return s[strings.LastIndex(s, "\n")+1:]
}
