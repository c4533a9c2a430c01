// Package testsops encrypts files the way `sops encrypt` does, with age
// recipients, so tests commit real SOPS files without the sops binary.
package testsops

import (
	"errors"
	"fmt"
	"strings"
	"time"

	sopsv3 "github.com/getsops/sops/v3"
	sopsaes "github.com/getsops/sops/v3/aes"
	sopsage "github.com/getsops/sops/v3/age"
	sopsconfig "github.com/getsops/sops/v3/config"
	sopsjson "github.com/getsops/sops/v3/stores/json"
	sopsyaml "github.com/getsops/sops/v3/stores/yaml"
)

// Version is the sops version written into encrypted files' metadata.
const Version = "3.13.3"

type plainStore interface {
	LoadPlainFile(in []byte) (sopsv3.TreeBranches, error)
	EmitEncryptedFile(tree sopsv3.Tree) ([]byte, error)
}

// Encrypt encrypts plain, a YAML file or, when path ends in .json, a JSON
// file, for every age recipient in one key group. meta chooses what is
// encrypted (EncryptedRegex, UnencryptedSuffix, ...); with neither set, as
// sops does, every value but those under keys ending in _unencrypted is.
func Encrypt(path string, plain []byte, meta sopsv3.Metadata, recipients ...string) ([]byte, error) {
	var store plainStore = sopsyaml.NewStore(&sopsconfig.YAMLStoreConfig{})
	if strings.HasSuffix(path, ".json") {
		store = sopsjson.NewStore(&sopsconfig.JSONStoreConfig{})
	}
	branches, err := store.LoadPlainFile(plain)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var group sopsv3.KeyGroup
	for _, r := range recipients {
		key, err := sopsage.MasterKeyFromRecipient(r)
		if err != nil {
			return nil, fmt.Errorf("age recipient %q: %w", r, err)
		}
		group = append(group, key)
	}
	meta.KeyGroups = []sopsv3.KeyGroup{group}
	meta.Version = Version
	if meta.EncryptedRegex == "" && meta.UnencryptedSuffix == "" {
		meta.UnencryptedSuffix = sopsv3.DefaultUnencryptedSuffix
	}
	tree := sopsv3.Tree{Branches: branches, Metadata: meta}
	dataKey, errs := tree.GenerateDataKey()
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s: generating the data key: %w", path, errors.Join(errs...))
	}
	cipher := sopsaes.NewCipher()
	mac, err := tree.Encrypt(dataKey, cipher)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	tree.Metadata.LastModified = time.Now().UTC()
	if tree.Metadata.MessageAuthenticationCode, err = cipher.Encrypt(mac, dataKey, tree.Metadata.LastModified.Format(time.RFC3339)); err != nil {
		return nil, fmt.Errorf("%s: encrypting the MAC: %w", path, err)
	}
	return store.EmitEncryptedFile(tree)
}
