package main

import (
	"strings"
	"testing"
)

// --concurrent, as Flux names it, sets how many Applications roll out at
// once; fewer than one is refused, naming the flag.
func TestBindFlags_ConcurrentDefaultsToSixteenAndRefusesLessThanOne(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		want    int
		wantErr string
	}{
		{name: "default", want: defaultConcurrent},
		{name: "custom", args: []string{"--concurrent=16"}, want: 16},
		{name: "zero", args: []string{"--concurrent=0"}, wantErr: "--concurrent 0: must be at least 1"},
		{name: "negative", args: []string{"--concurrent=-2"}, wantErr: "--concurrent -2: must be at least 1"},
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
			if o.MaxConcurrentReconciles != tc.want {
				t.Fatalf("MaxConcurrentReconciles = %d, want %d", o.MaxConcurrentReconciles, tc.want)
			}
		})
	}
}
