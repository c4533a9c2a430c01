// Package sops decrypts SOPS-encrypted YAML and JSON files in memory with age
// identities. Plaintext never touches disk and never appears in errors.
//
// The SOPS stores parse the file, an age-only key service recovers the data
// key and the AES cipher decrypts the values. SOPS' decrypt package is not
// used: it looks for keys in the process environment, the home directory
// and cloud KMS credentials.
package sops

import (
	"bytes"
	"crypto/hmac"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	sopsv3 "github.com/getsops/sops/v3"
	sopsaes "github.com/getsops/sops/v3/aes"
	sopsage "github.com/getsops/sops/v3/age"
	sopsconfig "github.com/getsops/sops/v3/config"
	sopskeyservice "github.com/getsops/sops/v3/keyservice"
	"github.com/getsops/sops/v3/stores"
	sopsjson "github.com/getsops/sops/v3/stores/json"
	sopsyaml "github.com/getsops/sops/v3/stores/yaml"
	"go.yaml.in/yaml/v3"
)

// Decryptor decrypts SOPS files with the age identities of one Application.
// A Decryptor without identities, as returned by NoKeys, passes plain files
// through and refuses encrypted ones. It is safe for concurrent use.
type Decryptor struct {
	keys ageKeyService
}

// NoKeys returns the Decryptor for an Application without spec.decryption:
// plain files pass through unchanged, encrypted files are refused so that
// ciphertext is never applied.
func NoKeys() *Decryptor {
	return &Decryptor{}
}

// Decrypt returns data unchanged unless it is a SOPS document (YAML or JSON
// whose top-level sops map holds a mac). A SOPS document is decrypted, its MAC
// verified, and the plaintext returned in the same format. path names the
// file in errors and selects JSON for *.json files.
func (d *Decryptor) Decrypt(path string, data []byte) ([]byte, error) {
	if !isSOPSDocument(data) {
		return data, nil
	}
	if d == nil || len(d.keys.identities) == 0 {
		return nil, fmt.Errorf("%s is encrypted with SOPS but the Application has no spec.decryption", path)
	}
	store := storeFor(path, data)

	tree, err := store.LoadEncryptedFile(data)
	if err != nil {
		return nil, fmt.Errorf("reading SOPS file %s: %w", path, err)
	}
	dataKey, err := tree.Metadata.GetDataKeyWithKeyServices(
		[]sopskeyservice.KeyServiceClient{d.keys}, []string{sopsage.KeyTypeIdentifier})
	if err != nil {
		return nil, fmt.Errorf("decrypting the SOPS data key of %s with the .agekey identities: %w", path, err)
	}

	// Errors from decrypting the tree or emitting it may quote values, so
	// they are replaced by messages that name only the file.
	cipher := sopsaes.NewCipher()
	mac, err := tree.Decrypt(dataKey, cipher)
	if err != nil {
		return nil, fmt.Errorf("decrypting %s: a value is not valid SOPS ciphertext for the file's data key (tampered, or edited without sops)", path)
	}
	storedMAC, err := cipher.Decrypt(tree.Metadata.MessageAuthenticationCode, dataKey,
		tree.Metadata.LastModified.Format(time.RFC3339))
	if err != nil {
		return nil, fmt.Errorf("verifying %s: the SOPS MAC cannot be decrypted with the file's data key (sops.mac or sops.lastmodified was tampered with)", path)
	}
	if s, ok := storedMAC.(string); !ok || !hmac.Equal([]byte(s), []byte(mac)) {
		return nil, fmt.Errorf("verifying %s: SOPS MAC mismatch, the file was modified after it was encrypted", path)
	}
	out, err := store.EmitPlainFile(tree.Branches)
	if err != nil {
		return nil, fmt.Errorf("encoding the decrypted contents of %s failed", path)
	}
	return out, nil
}

// store is the part of the SOPS stores this package uses.
type store interface {
	LoadEncryptedFile(in []byte) (sopsv3.Tree, error)
	EmitPlainFile(branches sopsv3.TreeBranches) ([]byte, error)
}

// storeFor picks the JSON store for *.json files and for content that is a
// JSON object, so the plaintext keeps the file's format; YAML otherwise.
func storeFor(path string, data []byte) store {
	trimmed := bytes.TrimSpace(data)
	if filepath.Ext(path) == ".json" || (len(trimmed) > 0 && trimmed[0] == '{' && json.Valid(trimmed)) {
		return sopsjson.NewStore(&sopsconfig.JSONStoreConfig{})
	}
	return sopsyaml.NewStore(&sopsconfig.YAMLStoreConfig{})
}

// isSOPSDocument reports whether any YAML document in data (JSON parses as
// YAML) has a top-level sops mapping that holds a mac. Unparseable data is
// not a SOPS document: it passes through and its reader reports the error.
func isSOPSDocument(data []byte) bool {
	if !bytes.Contains(data, []byte(stores.SopsMetadataKey)) {
		return false
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			return false
		}
		if len(doc.Content) == 0 {
			continue
		}
		if meta := mappingValue(doc.Content[0], stores.SopsMetadataKey); meta != nil && mappingValue(meta, "mac") != nil {
			return true
		}
	}
}

// mappingValue returns the value of key in a YAML mapping node, or nil.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Kind == yaml.ScalarNode && n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
