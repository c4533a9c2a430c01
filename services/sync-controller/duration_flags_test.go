package main

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/revision"
)

// Drift is re-checked every 5m, as the guide says, and a failed attempt
// retried after 30s (docs/rollout.md); 0 turns either off and a negative
// value is refused, naming the flag.
func TestBindFlags_DurationsDefaultAsTheGuideSaysZeroDisablesNegativeIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name               string
		args               []string
		wantDrift, wantTry time.Duration
		wantErr            string
	}{
		{name: "defaults", wantDrift: 5 * time.Minute, wantTry: 30 * time.Second},
		{name: "drift re-check off", args: []string{"--drift-resync-interval=0"}, wantDrift: 0, wantTry: 30 * time.Second},
		{name: "retries off", args: []string{"--retry-interval=0"}, wantDrift: 5 * time.Minute, wantTry: 0},
		{name: "custom", args: []string{"--drift-resync-interval=90s", "--retry-interval=1m"}, wantDrift: 90 * time.Second, wantTry: time.Minute},
		{name: "negative drift interval", args: []string{"--drift-resync-interval=-1m"}, wantErr: "--drift-resync-interval -1m0s is negative"},
		{name: "negative retry interval", args: []string{"--retry-interval=-5s"}, wantErr: "--retry-interval -5s is negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseFlags(t, tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("validate() = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.DriftResyncInterval != tc.wantDrift || o.RetryInterval != tc.wantTry {
				t.Fatalf("drift %s, retry %s; want %s, %s", o.DriftResyncInterval, o.RetryInterval, tc.wantDrift, tc.wantTry)
			}
		})
	}
}

// parseFlags parses args as the sync-controller's own flags and validates
// them.
func parseFlags(t *testing.T, args []string) (revision.Options, error) {
	t.Helper()
	fs := flag.NewFlagSet("sync-controller", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o revision.Options
	bindFlags(fs, &o)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return o, validate(o)
}
