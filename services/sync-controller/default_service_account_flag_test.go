package main

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/revision"
)

// The guide's --default-service-account is empty by default: an Application
// that names no service account is refused (the revision package's
// TestServiceAccount_MissingOneIsRefusedWithACondition shows the refusal
// for an empty value), never applied as some account the flag picked.
func TestBindFlags_DefaultServiceAccountIsEmptyUnlessSet(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{name: "default", want: ""},
		{name: "set", args: []string{"--default-service-account=deployer"}, want: "deployer"},
		{name: "set empty", args: []string{"--default-service-account="}, want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseFlags(t, tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if o.DefaultServiceAccount != tc.want {
				t.Errorf("DefaultServiceAccount %q, want %q", o.DefaultServiceAccount, tc.want)
			}
		})
	}

	t.Run("help says what empty means", func(t *testing.T) {
		fs := flag.NewFlagSet("sync-controller", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		bindFlags(fs, &revision.Options{})
		f := fs.Lookup("default-service-account")
		if f == nil || f.DefValue != "" || !strings.Contains(f.Usage, "empty refuses them") {
			t.Errorf("flag %+v, want an empty default whose help says empty refuses them", f)
		}
	})
}
