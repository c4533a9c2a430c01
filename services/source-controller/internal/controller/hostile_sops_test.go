package controller_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"filippo.io/age"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	testgit "github.com/kuvryn/kuvryn-sync/pkg/testkit/git"
)

// flipAfter changes the base64 character right after marker, as a bit
// flip in transit or a hand edit of ciphertext would.
func flipAfter(t *testing.T, s, marker string) string {
	t.Helper()
	i := strings.Index(s, marker)
	if i < 0 {
		t.Fatalf("%q not in the encrypted file", marker)
	}
	i += len(marker)
	c := byte('A')
	if s[i] == 'A' {
		c = 'B'
	}
	return s[:i] + string(c) + s[i+1:]
}

func TestHostileSOPS_TamperedFilesAndWrongKeysFailDecryptionWithoutPlaintext(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	owner, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	plaintext := "kuvryn-plaintext-" + rand.Text()
	encrypted := string(sopsEncrypt(t, strings.Replace(dbSecret, "%s", plaintext, 1), owner.Recipient().String()))
	// A plain value slipped into the encrypted stringData after encryption.
	mixed := strings.Replace(encrypted, "stringData:\n", "stringData:\n    injected: "+plaintext+"-plain\n", 1)
	if mixed == encrypted {
		t.Fatalf("no stringData mapping in the encrypted file:\n%s", encrypted)
	}
	// A plain value of the encrypted file edited without sops.
	edited := strings.Replace(encrypted, "name: db\n", "name: db-forged\n", 1)
	if edited == encrypted {
		t.Fatalf("no metadata.name in the encrypted file:\n%s", encrypted)
	}
	gitRepo, err := git.CreateRepo(ns + "/platform")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gitRepo.Apply(testgit.DefaultBranch, "hostile SOPS files",
		testgit.File("mac/db.yaml", flipAfter(t, encrypted, "mac: ENC[AES256_GCM,data:")),
		testgit.File("cipher/db.yaml", flipAfter(t, encrypted, "password: ENC[AES256_GCM,data:")),
		testgit.File("mixed/db.yaml", mixed),
		testgit.File("edited/db.yaml", edited),
		testgit.File("intact/db.yaml", encrypted),
	); err != nil {
		t.Fatal(err)
	}
	repo := &syncv1.Repository{
		ObjectMeta: metav1.ObjectMeta{Name: "platform", Namespace: ns},
		Spec:       syncv1.RepositorySpec{Git: syncv1.GitSource{URL: gitRepo.URL(), Revision: testgit.DefaultBranch}},
	}
	if err := k8s.Create(t.Context(), repo); err != nil {
		t.Fatal(err)
	}
	newKeySecret(t, ns, "owner-age", owner, true)
	newKeySecret(t, ns, "stranger-age", stranger, true)
	noAgeKey := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "no-agekey", Namespace: ns, Labels: map[string]string{syncv1.DecryptionKeyLabel: "true"}},
		Data:       map[string][]byte{"age.txt": []byte(owner.String())},
	}
	if err := k8s.Create(t.Context(), noAgeKey); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name, app, path, keySecret string
		wants                      []string
	}{
		{name: "tampered MAC", app: "mac", path: "mac", keySecret: "owner-age", wants: []string{"mac/db.yaml", "MAC cannot be decrypted"}},
		{name: "tampered ciphertext", app: "cipher", path: "cipher", keySecret: "owner-age", wants: []string{"cipher/db.yaml", "not valid SOPS ciphertext"}},
		{name: "plain value mixed into an encrypted file", app: "mixed", path: "mixed", keySecret: "owner-age", wants: []string{"mixed/db.yaml", "not valid SOPS ciphertext"}},
		{name: "plain value edited without sops", app: "edited", path: "edited", keySecret: "owner-age", wants: []string{"edited/db.yaml", "MAC mismatch"}},
		{name: "key of another recipient", app: "wrong-key", path: "intact", keySecret: "stranger-age", wants: []string{"intact/db.yaml", "data key"}},
		{name: "key Secret without an .agekey entry", app: "no-agekey", path: "intact", keySecret: "no-agekey", wants: []string{"no-agekey", ".agekey"}},
		{name: "key Secret that does not exist", app: "missing-key", path: "intact", keySecret: "absent-age", wants: []string{"absent-age"}},
	}
	for _, tc := range cases {
		app := &syncv1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: tc.app, Namespace: ns},
			Spec: syncv1.ApplicationSpec{
				Source:     syncv1.ApplicationSource{RepositoryRef: syncv1.LocalObjectReference{Name: repo.Name}, Path: tc.path},
				Decryption: &syncv1.Decryption{Provider: "sops", SecretRef: syncv1.LocalObjectReference{Name: tc.keySecret}},
			},
		}
		if err := k8s.Create(t.Context(), app); err != nil {
			t.Fatal(err)
		}
	}
	var refused int
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkRefused(t, ns, tc.app, syncv1.ReasonDecryptionFailed, tc.wants...)
			refused++
		})
	}

	// The files decrypt with the owner's key when intact, so a value found
	// nowhere means it was withheld, not that it was never there.
	t.Run("no plaintext in status, Events or logs", func(t *testing.T) {
		needles := [][]byte{[]byte(plaintext), []byte(base64.StdEncoding.EncodeToString([]byte(plaintext))), []byte(owner.String())}
		var apps syncv1.ApplicationList
		var revs syncv1.RevisionList
		var events corev1.EventList
		for _, list := range []client.ObjectList{&apps, &revs, &events} {
			if err := k8s.List(t.Context(), list, client.InNamespace(ns)); err != nil {
				t.Fatal(err)
			}
		}
		var scanned []any
		for _, a := range apps.Items {
			scanned = append(scanned, a.Status)
		}
		for _, r := range revs.Items {
			scanned = append(scanned, r.Status)
		}
		for _, e := range events.Items {
			scanned = append(scanned, e)
		}
		if len(scanned) < 3*len(cases) {
			t.Fatalf("scanned %d statuses and Events, want at least an Application, a Revision and an Event per case", len(scanned))
		}
		for _, s := range scanned {
			data, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range needles {
				if bytes.Contains(data, n) {
					t.Errorf("secret material in %s", data)
				}
			}
		}
		for _, line := range strings.Split(logs.String(), "\n") {
			for _, n := range needles {
				if strings.Contains(line, string(n)) {
					t.Errorf("secret material in log line %s", line)
				}
			}
		}
	})
	t.Logf("hostile SOPS: %d inputs tried, %d refused", len(cases), refused)
}
