package controller_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"
	sopsv3 "github.com/getsops/sops/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/desiredstate"
	testgit "github.com/kuvryn/kuvryn-sync/pkg/testkit/git"
	testsops "github.com/kuvryn/kuvryn-sync/pkg/testkit/sops"
)

const dbSecret = `apiVersion: v1
kind: Secret
metadata:
  name: db
stringData:
  password: %s
`

// keySecretEntry is the decryption Secret entry holding the age identity.
const keySecretEntry = "payments.agekey"

// sopsEncrypt does what `sops encrypt --encrypted-regex '^(data|stringData)$'`
// does to a Kubernetes Secret manifest, for one age recipient.
func sopsEncrypt(t *testing.T, manifest, recipient string) []byte {
	t.Helper()
	out, err := testsops.Encrypt("db.yaml", []byte(manifest), sopsv3.Metadata{EncryptedRegex: "^(data|stringData)$"}, recipient)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// encryptedSecretRepo serves a repository whose apps/payments holds a
// SOPS-encrypted Secret carrying a fresh random plaintext, and a plain
// ConfigMap. It returns the plaintext, the identity that decrypts it, the
// encrypted file as committed and the repository.
func encryptedSecretRepo(t *testing.T, ns string) (string, *age.X25519Identity, []byte, *testgit.Repo) {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	plaintext := "kuvryn-plaintext-" + rand.Text()
	encrypted := sopsEncrypt(t, strings.Replace(dbSecret, "%s", plaintext, 1), id.Recipient().String())
	if bytes.Contains(encrypted, []byte(plaintext)) || !bytes.Contains(encrypted, []byte("ENC[AES256_GCM,")) {
		t.Fatalf("the committed file must hold ciphertext only:\n%s", encrypted)
	}
	gitRepo, _ := newRepository(t, ns, "platform", map[string]string{
		"apps/payments/db.yaml":       string(encrypted),
		"apps/payments/settings.yaml": strings.Replace(configMap, "%s", "blue", 1),
	})
	return plaintext, id, encrypted, gitRepo
}

// newKeySecret creates the decryption Secret holding id, labelled as the
// guide asks unless labelled is false.
func newKeySecret(t *testing.T, ns, name string, id *age.X25519Identity, labelled bool) {
	t.Helper()
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Data:       map[string][]byte{keySecretEntry: []byte("# payments team\n" + id.String() + "\n")},
	}
	if labelled {
		secret.Labels = map[string]string{syncv1.DecryptionKeyLabel: "true"}
	}
	if err := k8s.Create(t.Context(), secret); err != nil {
		t.Fatal(err)
	}
}

func newDecryptingApplication(t *testing.T, ns, name, keySecret string) {
	t.Helper()
	app := &syncv1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: syncv1.ApplicationSpec{
			Source: syncv1.ApplicationSource{RepositoryRef: syncv1.LocalObjectReference{Name: "platform"}, Path: "apps/payments"},
		},
	}
	if keySecret != "" {
		app.Spec.Decryption = &syncv1.Decryption{Provider: "sops", SecretRef: syncv1.LocalObjectReference{Name: keySecret}}
	}
	if err := k8s.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
}

func TestSOPS_PlaintextAppearsNowhere(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	plaintext, id, encrypted, _ := encryptedSecretRepo(t, ns)
	newKeySecret(t, ns, "payments-age", id, true)
	newDecryptingApplication(t, ns, "payments", "payments-age")

	var revName string
	eventually(t, "a desired Revision", func() bool {
		revName = get(t, &syncv1.Application{}, ns, "payments").Status.DesiredRevision
		return revName != ""
	})

	// The desired state holds the decrypted Secret: decryption did happen,
	// so finding the plaintext nowhere else means something.
	rev := get(t, &syncv1.Revision{}, ns, revName)
	state := get(t, &corev1.Secret{}, ns, rev.Spec.DesiredState.SecretName)
	objs, err := desiredstate.Decode(state.Data[desiredstate.DataKey])
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 {
		t.Fatalf("desired state holds %d objects, want the Secret and the ConfigMap", len(objs))
	}
	var decrypted bool
	for _, o := range objs {
		if o.GetKind() == "Secret" && o.GetName() == "db" {
			password, _, _ := unstructured.NestedString(o.Object, "stringData", "password")
			_, hasSOPS := o.Object["sops"]
			decrypted = password == plaintext && !hasSOPS
		}
	}
	if !decrypted {
		t.Fatal("the desired state does not hold the decrypted Secret db")
	}

	// Secret data may reach an object base64-encoded rather than verbatim.
	needles := [][]byte{[]byte(plaintext), []byte(base64.StdEncoding.EncodeToString([]byte(plaintext)))}
	leaks := func(data []byte) bool {
		for _, n := range needles {
			if bytes.Contains(data, n) {
				return true
			}
		}
		return false
	}

	t.Run("no file under the cache dir", func(t *testing.T) {
		var files int
		var sawCiphertext bool
		err := filepath.WalkDir(cacheDir, func(path string, d fs.DirEntry, err error) error {
			// Other Applications' renders and pulls come and go meanwhile.
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			data, err := os.ReadFile(path)
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil {
				return err
			}
			files++
			sawCiphertext = sawCiphertext || bytes.Equal(data, encrypted)
			if leaks(data) {
				t.Errorf("%s holds the plaintext", path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// The checkout holds the file exactly as committed, so the walk did
		// reach the files a render reads.
		if !sawCiphertext {
			t.Fatalf("scanned %d files but none is the encrypted file as committed", files)
		}
	})

	t.Run("no status or Revision spec", func(t *testing.T) {
		var apps syncv1.ApplicationList
		var revs syncv1.RevisionList
		var repos syncv1.RepositoryList
		for _, list := range []client.ObjectList{&apps, &revs, &repos} {
			if err := k8s.List(t.Context(), list, client.InNamespace(ns)); err != nil {
				t.Fatal(err)
			}
		}
		var statuses []any
		for _, a := range apps.Items {
			statuses = append(statuses, a.Status)
		}
		for _, r := range revs.Items {
			statuses = append(statuses, r.Status, r.Spec)
		}
		for _, r := range repos.Items {
			statuses = append(statuses, r.Status)
		}
		if len(statuses) != 4 {
			t.Fatalf("found %d statuses and Revision specs, want an Application, a Revision and a Repository", len(statuses))
		}
		for _, s := range statuses {
			data, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			if leaks(data) {
				t.Errorf("a status holds the plaintext: %s", data)
			}
		}
	})

	// A routine render emits no Event (TestRender_WritesNoRevisionStatus
	// shows it); whatever Event the namespace holds is scanned all the same.
	t.Run("no Event", func(t *testing.T) {
		var events corev1.EventList
		if err := k8s.List(t.Context(), &events, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		for _, e := range events.Items {
			data, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			if leaks(data) {
				t.Errorf("Event %s holds the plaintext", e.Name)
			}
		}
	})

	t.Run("no log line", func(t *testing.T) {
		lines := logs.String()
		if lines == "" {
			t.Fatal("no manager log captured")
		}
		for _, line := range strings.Split(lines, "\n") {
			if leaks([]byte(line)) {
				t.Errorf("log line holds the plaintext: %s", line)
			}
		}
	})
}

func TestSOPS_EncryptedFileWithoutDecryptionFails(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	plaintext, id, _, _ := encryptedSecretRepo(t, ns)
	newKeySecret(t, ns, "unlabelled-age", id, false)

	for _, tc := range []struct {
		name, app, keySecret string
		want                 []string
	}{
		{
			name: "no spec.decryption",
			app:  "without-decryption",
			want: []string{"apps/payments/db.yaml", "spec.decryption"},
		},
		{
			name:      "key Secret without the decryption-key label",
			app:       "unlabelled-key",
			keySecret: "unlabelled-age",
			want:      []string{"unlabelled-age", syncv1.DecryptionKeyLabel},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			newDecryptingApplication(t, ns, tc.app, tc.keySecret)
			var cond *metav1.Condition
			eventually(t, "Rendered=False", func() bool {
				app := get(t, &syncv1.Application{}, ns, tc.app)
				cond = meta.FindStatusCondition(app.Status.Conditions, syncv1.ConditionRendered)
				return cond != nil && cond.Status == metav1.ConditionFalse && cond.Reason != syncv1.ReasonProgressing
			})
			if cond.Reason != syncv1.ReasonDecryptionFailed {
				t.Fatalf("condition %s: %s, want %s", cond.Reason, cond.Message, syncv1.ReasonDecryptionFailed)
			}
			for _, w := range tc.want {
				if !strings.Contains(cond.Message, w) {
					t.Errorf("condition message %q does not name %q", cond.Message, w)
				}
			}
			if strings.Contains(cond.Message, plaintext) || strings.Contains(cond.Message, id.String()) {
				t.Fatalf("condition message leaks secret material: %s", cond.Message)
			}
			failed := renderFailureRecord(t, ns, tc.app, "")
			if f := failed.Spec.RenderFailure; f.Reason != syncv1.ReasonDecryptionFailed || strings.Contains(f.Message, plaintext) {
				t.Fatalf("failed Revision's spec.renderFailure %s: %s, want DecryptionFailed without plaintext", f.Reason, f.Message)
			}
			if revs := revisionsOf(t, ns, tc.app); len(revs) != 1 {
				t.Fatalf("%d Revisions for an Application whose decryption failed, want the one Failed record", len(revs))
			}
			var secrets corev1.SecretList
			if err := k8s.List(t.Context(), &secrets, client.InNamespace(ns), client.MatchingLabels{syncv1.ApplicationLabel: tc.app}); err != nil {
				t.Fatal(err)
			}
			if len(secrets.Items) != 0 {
				t.Fatalf("a desired-state Secret exists for an Application whose decryption failed: %s", secrets.Items[0].Name)
			}
			eventually(t, "a DecryptionFailed Warning Event", func() bool {
				var events corev1.EventList
				if err := k8s.List(t.Context(), &events, client.InNamespace(ns)); err != nil {
					t.Fatal(err)
				}
				for _, e := range events.Items {
					if e.Reason == syncv1.ReasonDecryptionFailed && e.Type == corev1.EventTypeWarning && e.InvolvedObject.Name == tc.app {
						return true
					}
				}
				return false
			})
		})
	}
}
