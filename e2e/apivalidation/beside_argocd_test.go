package apivalidation_test

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kuvryn/kuvryn-sync/pkg/testkit/controlplane"
)

// TestAPI_BesideArgoCD: Argo CD's Application CRD has our kind, plural and
// short names (app, apps), and teams migrating run both. With both
// installed, kubectl resolves app, apps and applications to Argo CD's
// (argoproj.io sorts before sync.kuvryn.io) and warns that ours matched too;
// the commands docs/install.md ("Beside Argo CD") gives reach ours.
func TestAPI_BesideArgoCD(t *testing.T) {
	ns := namespace(t)
	crd := filepath.Join("testdata", "argocd-application-crd.yaml")
	kubectl(t, "apply", "-f", crd)
	t.Cleanup(func() { _, _, _ = run(t, "delete", "-f", crd, "--wait=false") })
	kubectl(t, "wait", "--for=condition=Established", "crd/applications.argoproj.io", "--timeout=60s")
	if err := k8s.Create(t.Context(), validApplication(ns)); err != nil {
		t.Fatal(err)
	}
	argo := "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: guestbook, namespace: " + ns + "}\n"
	if _, errOut, err := runIn(t, argo, "apply", "-f", "-"); err != nil {
		t.Fatalf("creating Argo CD's Application guestbook: %v\n%s", err, errOut)
	}
	ours, argos := "application.sync.kuvryn.io/api", "application.argoproj.io/guestbook"
	for _, tc := range []struct {
		args []string
		// out is what stdout holds, warning what stderr holds; not is
		// what stdout must not hold.
		out, warning, not string
	}{
		// The guide's short names and the kind's names reach Argo CD's.
		{args: []string{"get", "app", "-o", "name"}, out: argos, not: ours,
			warning: `short name "app" could also match lower priority resource applications.sync.kuvryn.io`},
		{args: []string{"get", "apps", "-o", "name"}, out: argos, not: ours,
			warning: `short name "apps" could also match lower priority resource applications.sync.kuvryn.io`},
		{args: []string{"get", "applications", "-o", "name"}, out: argos, not: ours},
		{args: []string{"get", "application", "-o", "name"}, out: argos, not: ours},
		// Naming the group reaches ours, with the short name too.
		{args: []string{"get", "applications.sync.kuvryn.io", "-o", "name"}, out: ours, not: argos},
		{args: []string{"get", "app.sync.kuvryn.io", "-o", "name"}, out: ours, not: argos},
		{args: []string{"describe", "app.sync.kuvryn.io", "api"}, out: "API Version:  sync.kuvryn.io/v1alpha1"},
		{args: []string{"describe", "applications.sync.kuvryn.io", "api"}, out: "API Version:  sync.kuvryn.io/v1alpha1"},
		// The category lists every Kuvryn Sync kind and nothing of Argo CD's.
		{args: []string{"get", "kuvryn", "-o", "name"}, out: ours, not: argos},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, errOut, err := run(t, append(tc.args, "-n", ns)...)
			if err != nil {
				t.Fatalf("%v\n%s", err, errOut)
			}
			if !strings.Contains(out, tc.out) || (tc.not != "" && strings.Contains(out, tc.not)) {
				t.Errorf("stdout %q, want %q and not %q", out, tc.out, tc.not)
			}
			if tc.warning != "" && !strings.Contains(errOut, tc.warning) {
				t.Errorf("stderr %q, want the warning %q", errOut, tc.warning)
			}
		})
	}
	// The guide's describe command finds Argo CD's Application of that
	// name, or, as here, none.
	_, errOut, err := run(t, "describe", "app", "api", "-n", ns)
	if want := `applications.argoproj.io "api" not found`; err == nil || !strings.Contains(errOut, want) {
		t.Errorf("kubectl describe app api: %v %q, want %q", err, errOut, want)
	}
}

// kubectl runs bin/kubectl against the control plane and fails the test
// if it fails.
func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, err := run(t, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, errOut)
	}
	return out
}

func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	return runIn(t, "", args...)
}

// runIn runs bin/kubectl with stdin.
func runIn(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	root, err := controlplane.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), filepath.Join(root, "bin", "kubectl"), append([]string{"--kubeconfig", kubeconfig, "--cache-dir", t.TempDir()}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(stdin), &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}
