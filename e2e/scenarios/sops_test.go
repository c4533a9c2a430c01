package scenarios_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"
	sopsv3 "github.com/getsops/sops/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	testsops "github.com/kuvryn/kuvryn-sync/pkg/testkit/sops"
)

// TestE2E_SOPSSecretAppliedAndItsPlaintextFoundNowhere: a SOPS-encrypted
// Secret committed to Git is decrypted with the Application's labelled age
// key, applied and Healthy; its plaintext is then looked for, verbatim and
// base64-encoded, on every file the run wrote outside etcd (the services'
// logs and caches, the Git server), in every status and Event of the
// namespace, and in what ksync prints. Only the applied Secret and the
// desired-state Secret, both Secrets, may hold it.
func TestE2E_SOPSSecretAppliedAndItsPlaintextFoundNowhere(t *testing.T) {
	t.Parallel()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	plaintext := "kuvryn-e2e-plaintext-" + rand.Text()
	manifest := "apiVersion: v1\nkind: Secret\nmetadata: {name: db}\nstringData: {password: " + plaintext + "}\n"
	encrypted, err := testsops.Encrypt("db.yaml", []byte(manifest), sopsv3.Metadata{EncryptedRegex: "^(data|stringData)$"}, id.Recipient().String())
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(encrypted, []byte("ENC[AES256_GCM,"))
	if i < 0 || bytes.Contains(encrypted, []byte(plaintext)) {
		t.Fatalf("the file to commit must hold ciphertext only:\n%s", encrypted)
	}
	ciphertext := encrypted[i : i+64]

	ns := namespace(t, "e2e-sops")
	key := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "payments-age", Namespace: ns, Labels: map[string]string{syncv1.DecryptionKeyLabel: "true"}},
		Data:       map[string][]byte{"payments.agekey": []byte(id.String() + "\n")},
	}
	if err := env.Client.Create(t.Context(), key); err != nil {
		t.Fatal(err)
	}
	repository(t, ns, "platform", map[string]string{
		".ksync.yaml": `metadata: {name: payments}
spec:
  source: {path: apps/payments}
  decryption: {provider: sops, secretRef: {name: payments-age}}
  serviceAccountName: deployer
  sync: {automatic: true}
`,
		"apps/payments/db.yaml":       string(encrypted),
		"apps/payments/settings.yaml": settingsYAML("blue"),
	})
	rev := waitHealthy(t, ns, "payments", "")

	live := get(t, &corev1.Secret{}, ns, "db")
	if string(live.Data["password"]) != plaintext {
		t.Fatal("the applied Secret db does not hold the decrypted password")
	}
	needles := [][]byte{[]byte(plaintext), []byte(base64.StdEncoding.EncodeToString([]byte(plaintext)))}
	leaks := func(data []byte) bool {
		for _, n := range needles {
			if bytes.Contains(data, n) {
				return true
			}
		}
		return false
	}

	t.Run("no file the run wrote outside etcd", func(t *testing.T) {
		var files int
		var sawCommitted bool
		err := filepath.WalkDir(env.Dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				// Caches and Git objects of other tests come and go meanwhile.
				return nil
			}
			if d.IsDir() && path == filepath.Join(env.Dir, "controlplane") {
				// etcd stores the two Secrets; that is where Secrets live.
				return filepath.SkipDir
			}
			if !d.Type().IsRegular() {
				return nil
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return nil
			}
			files++
			sawCommitted = sawCommitted || bytes.Contains(data, ciphertext)
			if leaks(data) {
				t.Errorf("%s holds the plaintext", path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// The source cache holds the file as committed, so the walk reached
		// what a render reads.
		if !sawCommitted {
			t.Fatalf("scanned %d files, none holding the encrypted file as committed", files)
		}
	})

	t.Run("no status or Event", func(t *testing.T) {
		var apps syncv1.ApplicationList
		var revs syncv1.RevisionList
		var repos syncv1.RepositoryList
		var events corev1.EventList
		for _, list := range []client.ObjectList{&apps, &revs, &repos, &events} {
			if err := env.Client.List(t.Context(), list, client.InNamespace(ns)); err != nil {
				t.Fatal(err)
			}
		}
		if len(events.Items) == 0 || len(revs.Items) == 0 {
			t.Fatalf("found %d Events and %d Revisions, want some to scan", len(events.Items), len(revs.Items))
		}
		for _, list := range []any{apps, revs, repos, events} {
			data, err := json.Marshal(list)
			if err != nil {
				t.Fatal(err)
			}
			if leaks(data) {
				t.Errorf("%T holds the plaintext", list)
			}
		}
	})

	t.Run("no ksync output", func(t *testing.T) {
		for _, args := range [][]string{
			{"plan", "payments", "-n", ns, "-o", "yaml"},
			{"plan", "payments", "-n", ns, "--revision", rev},
			{"history", "payments", "-n", ns, "-o", "json"},
			{"apps", "-n", ns, "-o", "yaml"},
		} {
			out, errOut, err := ksync(t, env.CP.Kubeconfig, args...)
			if err != nil {
				t.Fatalf("ksync %s: %v\n%s", strings.Join(args, " "), err, errOut)
			}
			if leaks([]byte(out + errOut)) {
				t.Errorf("ksync %s prints the plaintext", strings.Join(args, " "))
			}
		}
	})
}
