package commands

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestRun_ExitCodes(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-kubeconfig")
	cases := []struct {
		name       string
		args       []string
		code       int
		stdout     string
		stderrPart string
	}{
		{"version prints the build version", []string{"ksync", "version"}, 0, "ksync dev\n", ""},
		{"unknown command is bad usage", []string{"ksync", "nope"}, exitUsage, "", `unknown command "nope"`},
		{"unknown flag is bad usage", []string{"ksync", "version", "--nope"}, exitUsage, "", "flag provided but not defined"},
		{"apps takes no argument", []string{"ksync", "apps", "api"}, exitUsage, "", `apps takes no arguments, got ["api"]`},
		{"repos takes no argument", []string{"ksync", "repos", "platform"}, exitUsage, "", `repos takes no arguments`},
		{"plan needs an Application", []string{"ksync", "plan"}, exitUsage, "", "plan takes exactly one Application name, got 0 arguments"},
		{"history takes one Application only", []string{"ksync", "history", "a", "b"}, exitUsage, "", "history takes exactly one Application name, got 2 arguments"},
		{"approve needs an Application", []string{"ksync", "approve", "--yes"}, exitUsage, "", "approve takes exactly one Application name"},
		{"rollback needs an Application", []string{"ksync", "rollback"}, exitUsage, "", "rollback takes exactly one Application name"},
		{"previews takes one Repository at most", []string{"ksync", "previews", "a", "b"}, exitUsage, "", "previews takes at most one Repository name, got 2 arguments"},
		{"previews has no json output", []string{"ksync", "previews", "-o", "json"}, exitUsage, "", `unsupported output format "json" for previews; use one of: table, wide`},
		{"plan takes --ref or --revision", []string{"ksync", "plan", "api", "--ref", "12", "--revision", "api-1"}, exitUsage, "", "plan takes --ref or --revision, not both"},
		{"unknown output format is bad usage", []string{"ksync", "apps", "-o", "xml"}, exitUsage, "", `unsupported output format "xml" for apps; use one of: table, wide, json, yaml`},
		{"plan has no wide output", []string{"ksync", "plan", "api", "-o", "wide"}, exitUsage, "", `unsupported output format "wide" for plan`},
		{"flag without value is bad usage", []string{"ksync", "apps", "-n"}, exitUsage, "", "flag needs an argument"},
		{"completion for an unknown shell is bad usage", []string{"ksync", "completion", "fish"}, exitUsage, "", `completion takes one shell, bash or zsh, got ["fish"]`},
		{"a missing kubeconfig fails the operation", []string{"ksync", "apps", "--kubeconfig", missing}, exitFailed, "", "loading kubeconfig: stat " + missing},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := Run(tc.args, &out, &errOut)
			if code != tc.code {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tc.code, errOut.String())
			}
			if tc.stdout != "" && out.String() != tc.stdout {
				t.Errorf("stdout %q, want %q", out.String(), tc.stdout)
			}
			if !strings.Contains(errOut.String(), tc.stderrPart) {
				t.Errorf("stderr %q does not contain %q", errOut.String(), tc.stderrPart)
			}
		})
	}
}

func TestInterspersed_MovesFlagsBeforeArguments(t *testing.T) {
	app := &cli.App{Commands: []*cli.Command{{
		Name:  "plan",
		Flags: append(clusterFlags(), yesFlag(), outputFlag(outputTable)),
	}}}
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"flags after the argument", []string{"ksync", "plan", "api", "-n", "payments", "-o", "json"}, []string{"ksync", "plan", "-n", "payments", "-o", "json", "api"}},
		{"boolean flags take no value", []string{"ksync", "plan", "api", "--yes", "-n=payments"}, []string{"ksync", "plan", "--yes", "-n=payments", "api"}},
		{"after -- nothing is a flag", []string{"ksync", "plan", "-n", "x", "--", "-odd"}, []string{"ksync", "plan", "-n", "x", "--", "-odd"}},
		{"unknown commands are left alone", []string{"ksync", "nope", "a", "-n", "x"}, []string{"ksync", "nope", "a", "-n", "x"}},
		{"completion requests are left alone", []string{"ksync", "plan", "a", "-n", "x", "--generate-bash-completion"}, []string{"ksync", "plan", "a", "-n", "x", "--generate-bash-completion"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := interspersed(app, tc.args); !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCompletion_PrintsScriptsAndCommands(t *testing.T) {
	cases := []struct {
		name  string
		args  []string
		parts []string
	}{
		{"bash script", []string{"ksync", "completion", "bash"}, []string{"complete -o bashdefault -o default -o nospace -F _ksync_complete ksync", "--generate-bash-completion"}},
		{"zsh script", []string{"ksync", "completion", "zsh"}, []string{"#compdef ksync", "compdef _ksync ksync", "--generate-bash-completion"}},
		{"commands", []string{"ksync", "--generate-bash-completion"}, []string{"apps\n", "repos\n", "plan\n", "previews\n", "history\n", "approve\n", "rollback\n", "completion\n", "version\n"}},
		{"shells", []string{"ksync", "completion", "--generate-bash-completion"}, []string{"bash\nzsh\n"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := Run(tc.args, &out, &errOut); code != 0 {
				t.Fatalf("exit code %d, stderr %q", code, errOut.String())
			}
			for _, p := range tc.parts {
				if !strings.Contains(out.String(), p) {
					t.Errorf("output does not contain %q:\n%s", p, out.String())
				}
			}
		})
	}
}
