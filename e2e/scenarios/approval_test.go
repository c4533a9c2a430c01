package scenarios_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestE2E_ManualApplicationApprovedWithKsync: a manual Application's
// Revision is planned and waits; `ksync approve` run as a user other than
// admin approves exactly that plan; the webhook records who; the Revision
// is applied and keeps the approval in status.
func TestE2E_ManualApplicationApprovedWithKsync(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-approval")
	repository(t, ns, "platform", map[string]string{
		".ksync.yaml": `metadata: {name: payments}
spec:
  source: {path: apps/payments}
  serviceAccountName: deployer
  sync: {automatic: false}
`,
		"apps/payments/deployment.yaml": deployment("payments", "payments:1.0"),
	})
	var app syncv1.Application
	eventually(t, 3*time.Minute, "payments AwaitingApproval", func() bool {
		err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "payments"}, &app)
		return err == nil && meta.IsStatusConditionTrue(app.Status.Conditions, syncv1.ConditionAwaitingApproval)
	})
	rev := get(t, &syncv1.Revision{}, ns, app.Status.DesiredRevision)

	kubeconfig := userKubeconfig(t, "carol", ns)
	out, errOut, err := ksync(t, kubeconfig, "approve", "payments", "-n", ns, "--yes")
	if err != nil {
		t.Fatalf("ksync approve: %v\n%s%s", err, out, errOut)
	}
	if !strings.Contains(out, rev.Status.Plan.Digest) {
		t.Errorf("ksync approve did not show the plan digest %s:\n%s", rev.Status.Plan.Digest, out)
	}
	eventually(t, 3*time.Minute, "payments deployed and Healthy", func() bool {
		err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "payments"}, &app)
		return err == nil && app.Status.DeployedRevision == rev.Name && app.Status.Health == syncv1.HealthHealthy
	})
	if by := app.Annotations[syncv1.ApprovedByAnnotation]; by != "carol" {
		t.Errorf("approved-by %q, want carol", by)
	}
	rev = get(t, &syncv1.Revision{}, ns, rev.Name)
	if a := rev.Status.Approval; a == nil || a.By != "carol" || a.Digest != rev.Status.Plan.Digest {
		t.Fatalf("status.approval = %+v, want carol's approval of %s", a, rev.Status.Plan.Digest)
	}
}

// userKubeconfig writes a kubeconfig for a new user allowed to edit
// Applications in ns, as a platform team would grant approvers.
func userKubeconfig(t *testing.T, user, ns string) string {
	t.Helper()
	return kubeconfigWithRBAC(t, user, `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: approver, namespace: `+ns+`}
rules:
  - apiGroups: [sync.kuvryn.io]
    resources: [applications, revisions]
    verbs: [get, list, watch, patch, update]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: approver-`+user+`, namespace: `+ns+`}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: approver}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: `+user+`}]
`)
}

// kubeconfigWithRBAC applies the RBAC manifests rbac and writes a
// kubeconfig authenticating as the new user user.
func kubeconfigWithRBAC(t *testing.T, user, rbac string) string {
	t.Helper()
	if err := env.ApplyYAML(t.Context(), []byte(rbac)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), user+".kubeconfig")
	if err := env.UserKubeconfig(user, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func ksync(t *testing.T, kubeconfig string, args ...string) (string, string, error) {
	t.Helper()
	return runBin(t, "ksync", kubeconfig, args...)
}

// runBin runs bin/<name> with kubeconfig and returns its stdout and stderr.
func runBin(t *testing.T, name, kubeconfig string, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), filepath.Join(env.Root, "bin", name), args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "NO_COLOR=1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return out.String(), errOut.String(), err
}
