package commands

import (
	"bytes"
	"strings"
	"testing"
)

func TestRun_ExitCodes(t *testing.T) {
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
