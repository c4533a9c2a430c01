package sops

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"filippo.io/age"
	sopsv3 "github.com/getsops/sops/v3"
	"go.yaml.in/yaml/v3"

	testsops "github.com/kuvryn/kuvryn-sync/pkg/testkit/sops"
)

// Values that must never leave Decrypt except as plaintext output.
var secrets = []string{"hunter2-database-password", "tok-4f9c2e-api-token", "second-doc-secret"}

// fixture describes a plaintext file and how to encrypt it.
type fixture struct {
	path  string
	plain string
	meta  sopsv3.Metadata
}

var (
	yamlSecret = fixture{
		path: "secrets/db.yaml",
		plain: `apiVersion: v1
kind: Secret
metadata:
  name: db
stringData:
  password: hunter2-database-password
  port: "5432"
replicas: 3
visible_unencrypted: shown-as-is
`,
	}
	jsonSecret = fixture{
		path:  "secrets/api.json",
		plain: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"api"},"stringData":{"token":"tok-4f9c2e-api-token"},"enabled":true}`,
	}
	// The shape Kubernetes users encrypt most: only data and stringData.
	yamlRegexSecret = fixture{
		path: "secrets/regex.yaml",
		plain: `apiVersion: v1
kind: Secret
metadata:
  name: regex
stringData:
  password: hunter2-database-password
`,
		meta: sopsv3.Metadata{EncryptedRegex: "^(data|stringData)$"},
	}
	yamlMultiDoc = fixture{
		path: "secrets/multi.yaml",
		plain: `kind: Secret
stringData:
  password: hunter2-database-password
---
kind: Secret
stringData:
  other: second-doc-secret
`,
	}
)

func newIdentity(t *testing.T) *age.X25519Identity {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// encrypt does what `sops encrypt` does, with the given age recipients.
func encrypt(t *testing.T, f fixture, recipients ...string) []byte {
	t.Helper()
	out, err := testsops.Encrypt(f.path, []byte(f.plain), f.meta, recipients...)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if bytes.Contains(out, []byte(s)) {
			t.Fatalf("fixture %s: encrypted file still holds plaintext %q", f.path, s)
		}
	}
	return out
}

// decryptor builds a Decryptor from one .agekey entry holding ids.
func decryptor(t *testing.T, ids ...fmt.Stringer) *Decryptor {
	t.Helper()
	var lines []string
	for _, id := range ids {
		lines = append(lines, id.String())
	}
	d, err := NewDecryptor(map[string][]byte{"test.agekey": []byte(strings.Join(lines, "\n"))})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// decodeDocs parses every YAML (or JSON) document so outputs compare by value.
func decodeDocs(t *testing.T, data []byte) []any {
	t.Helper()
	var docs []any
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("decoding %q: %v", data, err)
		}
		docs = append(docs, v)
	}
}

func assertNoPlaintext(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	for _, s := range secrets {
		if strings.Contains(err.Error(), s) {
			t.Fatalf("error leaks plaintext %q: %v", s, err)
		}
	}
}

func TestDecrypt_ReturnsPlaintextInTheFilesFormat(t *testing.T) {
	id := newIdentity(t)
	d := decryptor(t, id)
	for _, tc := range []struct {
		name string
		f    fixture
		json bool
	}{
		{name: "yaml with unencrypted suffix", f: yamlSecret},
		{name: "json", f: jsonSecret, json: true},
		{name: "yaml with encrypted_regex", f: yamlRegexSecret},
		{name: "multi-document yaml", f: yamlMultiDoc},
	} {
		t.Run(tc.name, func(t *testing.T) {
			encrypted := encrypt(t, tc.f, id.Recipient().String())
			if tc.f.meta.EncryptedRegex != "" && !bytes.Contains(encrypted, []byte("name: regex")) {
				t.Fatalf("encrypted_regex should leave metadata.name readable:\n%s", encrypted)
			}
			got, err := d.Decrypt(tc.f.path, encrypted)
			if err != nil {
				t.Fatalf("Decrypt: %v", err)
			}
			if tc.json != json.Valid(got) {
				t.Fatalf("output JSON = %v, want %v:\n%s", json.Valid(got), tc.json, got)
			}
			if bytes.Contains(got, []byte("sops")) {
				t.Fatalf("output still carries SOPS metadata:\n%s", got)
			}
			want := decodeDocs(t, []byte(tc.f.plain))
			if gotDocs := decodeDocs(t, got); !equalJSON(t, gotDocs, want) {
				t.Fatalf("plaintext differs:\ngot  %v\nwant %v", gotDocs, want)
			}
		})
	}
}

func equalJSON(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(ja, jb)
}

func TestDecrypt_PassesPlainFilesThroughUnchanged(t *testing.T) {
	d := decryptor(t, newIdentity(t))
	for _, tc := range []struct {
		name, path, data string
	}{
		{name: "plain yaml", path: "deploy.yaml", data: "kind: ConfigMap\ndata:\n  a: b\n"},
		{name: "plain json", path: "deploy.json", data: `{"kind":"ConfigMap"}`},
		{name: "sops key without mac", path: "config.yaml", data: "sops:\n  enabled: true\n"},
		{name: "sops nested below the top level", path: "nested.yaml", data: "data:\n  sops:\n    mac: x\n"},
		{name: "not yaml", path: "broken.yaml", data: "sops: [unclosed\n"},
		{name: "empty", path: "empty.yaml", data: ""},
		{name: "binary", path: "logo.png", data: "\x89PNG\r\n\x1a\n\x00sops"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for name, dec := range map[string]*Decryptor{"with keys": d, "NoKeys": NoKeys()} {
				got, err := dec.Decrypt(tc.path, []byte(tc.data))
				if err != nil {
					t.Fatalf("%s: Decrypt: %v", name, err)
				}
				if string(got) != tc.data {
					t.Fatalf("%s: got %q, want the input unchanged", name, got)
				}
			}
		})
	}
}

func TestDecrypt_RefusesTamperedFiles(t *testing.T) {
	id := newIdentity(t)
	d := decryptor(t, id)
	encrypted := string(encrypt(t, yamlSecret, id.Recipient().String()))

	for _, tc := range []struct {
		name   string
		tamper func(string) string
		want   string
	}{
		{
			name:   "edited unencrypted value",
			tamper: func(s string) string { return strings.Replace(s, "shown-as-is", "changed", 1) },
			want:   "MAC mismatch",
		},
		{
			name:   "removed encrypted value",
			tamper: func(s string) string { return removeLine(s, "replicas:") },
			want:   "MAC mismatch",
		},
		{
			name:   "altered ciphertext",
			tamper: func(s string) string { return flipAfter(s, "password: ENC[AES256_GCM,data:") },
			want:   "not valid SOPS ciphertext",
		},
		{
			name:   "altered mac",
			tamper: func(s string) string { return flipAfter(s, "mac: ENC[AES256_GCM,data:") },
			want:   "MAC cannot be decrypted",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tampered := tc.tamper(encrypted)
			if tampered == encrypted {
				t.Fatal("tamper did not change the file")
			}
			_, err := d.Decrypt(yamlSecret.path, []byte(tampered))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), yamlSecret.path) {
				t.Fatalf("got error %v, want one naming %s and containing %q", err, yamlSecret.path, tc.want)
			}
			assertNoPlaintext(t, err)
		})
	}
}

func removeLine(s, prefix string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// flipAfter changes the base64 character right after marker to another one.
func flipAfter(s, marker string) string {
	i := strings.Index(s, marker)
	if i < 0 {
		return s
	}
	i += len(marker)
	c := byte('A')
	if s[i] == 'A' {
		c = 'B'
	}
	return s[:i] + string(c) + s[i+1:]
}

func TestDecrypt_FailsWithoutTheMatchingIdentity(t *testing.T) {
	owner := newIdentity(t)
	d := decryptor(t, newIdentity(t))
	for _, f := range []fixture{yamlSecret, jsonSecret} {
		_, err := d.Decrypt(f.path, encrypt(t, f, owner.Recipient().String()))
		if err == nil || !strings.Contains(err.Error(), "data key of "+f.path) {
			t.Fatalf("%s: got error %v, want a data key error naming the file", f.path, err)
		}
		assertNoPlaintext(t, err)
	}
}

func TestDecrypt_UsesAnyRecipientOfTheFile(t *testing.T) {
	teamA, teamB := newIdentity(t), newIdentity(t)
	encrypted := encrypt(t, yamlSecret, teamA.Recipient().String(), teamB.Recipient().String())
	if _, err := decryptor(t, teamB).Decrypt(yamlSecret.path, encrypted); err != nil {
		t.Fatalf("second recipient's identity should decrypt: %v", err)
	}
}

func TestDecrypt_AcceptsPostQuantumHybridIdentities(t *testing.T) {
	id, err := age.GenerateHybridIdentity()
	if err != nil {
		t.Fatal(err)
	}
	encrypted := encrypt(t, yamlSecret, id.Recipient().String())
	got, err := decryptor(t, id).Decrypt(yamlSecret.path, encrypted)
	if err != nil {
		t.Fatalf("Decrypt: %v", err)
	}
	if !bytes.Contains(got, []byte("hunter2-database-password")) {
		t.Fatalf("plaintext missing:\n%s", got)
	}
}

func TestNoKeys_RefusesEncryptedFiles(t *testing.T) {
	id := newIdentity(t)
	for _, f := range []fixture{yamlSecret, jsonSecret} {
		_, err := NoKeys().Decrypt(f.path, encrypt(t, f, id.Recipient().String()))
		if err == nil || !strings.Contains(err.Error(), "no spec.decryption") || !strings.Contains(err.Error(), f.path) {
			t.Fatalf("%s: got error %v, want a refusal naming the file and spec.decryption", f.path, err)
		}
		assertNoPlaintext(t, err)
	}
}

func TestNewDecryptor_TriesEveryAgeKeyEntry(t *testing.T) {
	owner, other := newIdentity(t), newIdentity(t)
	keys := map[string][]byte{
		"a-team.agekey": []byte(other.String()),
		"b-team.agekey": []byte("# created by ops\n\n" + newIdentity(t).String() + "\r\n" + owner.String() + "\n"),
		"README":        []byte("not a key"),
	}
	d, err := NewDecryptor(keys)
	if err != nil {
		t.Fatalf("NewDecryptor: %v", err)
	}
	got, err := d.Decrypt(yamlSecret.path, encrypt(t, yamlSecret, owner.Recipient().String()))
	if err != nil {
		t.Fatalf("Decrypt: %v", err)
	}
	if !bytes.Contains(got, []byte("hunter2-database-password")) {
		t.Fatalf("plaintext missing:\n%s", got)
	}
}

func TestNewDecryptor_SkipsBrokenEntriesWhenAnotherParses(t *testing.T) {
	owner := newIdentity(t)
	d, err := NewDecryptor(map[string][]byte{
		"broken.agekey": []byte("AGE-SECRET-KEY-1NOTBECH32"),
		"good.agekey":   []byte(owner.String()),
	})
	if err != nil {
		t.Fatalf("NewDecryptor: %v", err)
	}
	if _, err := d.Decrypt(yamlSecret.path, encrypt(t, yamlSecret, owner.Recipient().String())); err != nil {
		t.Fatalf("Decrypt: %v", err)
	}
}

func TestNewDecryptor_RefusesSecretsWithoutUsableAgeKeys(t *testing.T) {
	leaked := newIdentity(t).String()
	malformed := leaked[:len(leaked)-3] + "QQQ"
	for _, tc := range []struct {
		name string
		keys map[string][]byte
		want []string
	}{
		{name: "no entries", keys: nil, want: []string{"no entry ending in .agekey"}},
		{name: "no .agekey entries", keys: map[string][]byte{"age.key": []byte(leaked)}, want: []string{"no entry ending in .agekey"}},
		{name: "only comments", keys: map[string][]byte{"ops.agekey": []byte("# nothing\n\n")}, want: []string{`entry "ops.agekey" holds no age secret key`}},
		{name: "malformed key", keys: map[string][]byte{"ops.agekey": []byte("# k\n" + malformed)}, want: []string{`entry "ops.agekey" line 2 is a malformed age secret key`}},
		{name: "plugin identity", keys: map[string][]byte{"yubi.agekey": []byte("AGE-PLUGIN-YUBIKEY-1QQQQQQ")}, want: []string{`entry "yubi.agekey" line 1 is not an age secret key`}},
		{
			name: "every entry broken",
			keys: map[string][]byte{"a.agekey": []byte("ssh-ed25519 AAAA"), "b.agekey": []byte(malformed)},
			want: []string{`entry "a.agekey" line 1`, `entry "b.agekey" line 1`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewDecryptor(tc.keys)
			if err == nil {
				t.Fatal("NewDecryptor succeeded, want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not contain %q", err, w)
				}
			}
			for _, v := range tc.keys {
				for _, line := range strings.Split(string(v), "\n") {
					if strings.HasPrefix(line, "AGE-") && strings.Contains(err.Error(), line) {
						t.Fatalf("error leaks key material: %v", err)
					}
				}
			}
		})
	}
}
