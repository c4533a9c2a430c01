package scenarios_test

import (
	"strings"
	"testing"
	"time"

	"filippo.io/age"
	sopsv3 "github.com/getsops/sops/v3"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	testsops "github.com/kuvryn/kuvryn-sync/pkg/testkit/sops"
)

// TestE2E_RenderFailureIsVisibleInKubectlAndKsync: an encrypted file in an
// Application without spec.decryption fails the Revision, and the failure
// shows where users look: `kubectl get revisions`, `ksync history`, `ksync
// apps` and the Application's Ready condition.
func TestE2E_RenderFailureIsVisibleInKubectlAndKsync(t *testing.T) {
	t.Parallel()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	encrypted, err := testsops.Encrypt("db.yaml", []byte("apiVersion: v1\nkind: Secret\nmetadata: {name: db}\nstringData: {password: hunter2}\n"),
		sopsv3.Metadata{EncryptedRegex: "^(data|stringData)$"}, id.Recipient().String())
	if err != nil {
		t.Fatal(err)
	}
	ns := namespace(t, "e2e-render-failure")
	repository(t, ns, "platform", map[string]string{
		".ksync.yaml": `metadata: {name: payments}
spec:
  source: {path: apps/payments}
  serviceAccountName: deployer
  sync: {automatic: true}
`,
		"apps/payments/db.yaml":       string(encrypted),
		"apps/payments/settings.yaml": settingsYAML("blue"),
	})
	var app syncv1.Application
	eventually(t, 3*time.Minute, "payments Ready=False DecryptionFailed", func() bool {
		if env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "payments"}, &app) != nil {
			return false
		}
		c := meta.FindStatusCondition(app.Status.Conditions, syncv1.ConditionReady)
		return c != nil && c.Status == "False" && c.Reason == syncv1.ReasonDecryptionFailed
	})
	failed := app.Status.DesiredRevision
	if c := meta.FindStatusCondition(app.Status.Conditions, syncv1.ConditionReady); !containsAll(c.Message, "apps/payments/db.yaml", "spec.decryption") {
		t.Errorf("Ready message %q, want it to name the file and spec.decryption", c.Message)
	}
	if rev := get(t, &syncv1.Revision{}, ns, failed); rev.Status.Phase != syncv1.PhaseFailed {
		t.Errorf("Revision %s phase %s, want Failed", failed, rev.Status.Phase)
	}

	out, errOut, err := runBin(t, "kubectl", env.CP.Kubeconfig, "get", "revisions", "-n", ns)
	if err != nil || !containsAll(out, failed, "Failed") {
		t.Errorf("kubectl get revisions: %v\n%s%s\nwant the Failed Revision %s listed", err, out, errOut, failed)
	}
	viewer := ksyncViewer(t)
	out, _ = mustKsync(t, viewer, "history", "payments", "-n", ns)
	if !containsAll(out, failed, "Failed", syncv1.ReasonDecryptionFailed) || strings.Contains(out, "no deployment history") {
		t.Errorf("ksync history:\n%s\nwant the Failed attempt of %s with reason %s", out, failed, syncv1.ReasonDecryptionFailed)
	}
	out, _ = mustKsync(t, viewer, "apps", "-n", ns)
	if !containsAll(out, "payments", "Failed") {
		t.Errorf("ksync apps:\n%s\nwant payments shown Failed", out)
	}
	if strings.Contains(out+errOut, "hunter2") {
		t.Error("the plaintext of the encrypted file was printed")
	}
}
