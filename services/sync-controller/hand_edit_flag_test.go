package main

import (
	"flag"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/planner"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/revision"
)

func TestBindFlags_HandEditFieldManagersSetsTheListTakenBack(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		want    []string
		wantErr string
	}{
		{name: "default is the documented list", want: planner.DefaultHandEditManagers},
		{name: "a list", args: []string{"--hand-edit-field-managers=kubectl-patch,kubectl-edit"}, want: []string{"kubectl-patch", "kubectl-edit"}},
		{name: "spaces around entries", args: []string{"--hand-edit-field-managers= kubectl-patch , my-script "}, want: []string{"kubectl-patch", "my-script"}},
		{name: "empty takes back none", args: []string{"--hand-edit-field-managers="}, want: []string{}},
		{name: "empty entry", args: []string{"--hand-edit-field-managers=kubectl-patch,,kubectl-edit"}, wantErr: "entry 2 is empty"},
		{name: "own manager", args: []string{"--hand-edit-field-managers=kubectl-patch,kuvryn-image"}, wantErr: `entry 2 "kuvryn-image" is a Kuvryn Sync field manager`},
		{name: "listed twice", args: []string{"--hand-edit-field-managers=kubectl,kubectl"}, wantErr: `entry 2 "kubectl" is listed twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("sync-controller", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			var o revision.Options
			bindFlags(fs, &o)
			err := fs.Parse(tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "hand-edit-field-managers") {
					t.Fatalf("error = %v, want one naming the flag and %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.HandEditManagers == nil || !slices.Equal(o.HandEditManagers, tc.want) {
				t.Fatalf("HandEditManagers = %#v, want %#v", o.HandEditManagers, tc.want)
			}
		})
	}
}
