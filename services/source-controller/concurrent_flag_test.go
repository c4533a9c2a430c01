package main

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/kuvryn/kuvryn-sync/services/source-controller/internal/controller"
)

// --concurrent, as Flux names it, sets how many Repositories are fetched
// and Applications rendered at once; fewer than one is refused.
func TestBindFlags_ConcurrentDefaultsToEightAndRefusesLessThanOne(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		want    int
		wantErr string
	}{
		{name: "default", want: controller.DefaultConcurrent},
		{name: "custom", args: []string{"--concurrent=8"}, want: 8},
		{name: "zero", args: []string{"--concurrent=0"}, wantErr: "--concurrent 0: must be at least 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("source-controller", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			var o controller.Options
			bindFlags(fs, &o)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			err := validate(o)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("validate() = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.Concurrent != tc.want || o.CacheDir == "" {
				t.Fatalf("options %+v, want concurrent %d and a cache directory", o, tc.want)
			}
		})
	}
}
