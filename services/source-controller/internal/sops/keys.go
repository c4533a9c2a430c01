package sops

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"filippo.io/age"
	sopsage "github.com/getsops/sops/v3/age"
	sopskeyservice "github.com/getsops/sops/v3/keyservice"
	"google.golang.org/grpc"
)

// ageKeySuffix marks the entries of a decryption Secret that hold age identities.
const ageKeySuffix = ".agekey"

// NewDecryptor parses the age identities in every entry of a decryption
// Secret whose name ends in .agekey. Each entry holds one identity per line;
// blank lines and lines starting with # are ignored. Entries that do not
// parse are skipped as long as another entry yields an identity. Errors name
// entries and line numbers, never key material.
func NewDecryptor(keys map[string][]byte) (*Decryptor, error) {
	names := make([]string, 0, len(keys))
	for name := range keys {
		if strings.HasSuffix(name, ageKeySuffix) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("decryption Secret has no entry ending in %s", ageKeySuffix)
	}
	sort.Strings(names)

	var identities sopsage.ParsedIdentities
	var errs []error
	for _, name := range names {
		ids, err := parseIdentities(name, keys[name])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		identities = append(identities, ids...)
	}
	if len(identities) == 0 {
		return nil, fmt.Errorf("decryption Secret holds no usable age identity: %w", errors.Join(errs...))
	}
	return &Decryptor{keys: ageKeyService{identities: identities}}, nil
}

// parseIdentities parses one .agekey entry. Plugin identities are refused:
// they would run external binaries inside the controller.
func parseIdentities(entry string, data []byte) ([]age.Identity, error) {
	var ids []age.Identity
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var id age.Identity
		var err error
		switch {
		case strings.HasPrefix(line, "AGE-SECRET-KEY-PQ-1"):
			id, err = age.ParseHybridIdentity(line)
		case strings.HasPrefix(line, "AGE-SECRET-KEY-1"):
			id, err = age.ParseX25519Identity(line)
		default:
			return nil, fmt.Errorf("entry %q line %d is not an age secret key: only AGE-SECRET-KEY-1 identities are supported", entry, i+1)
		}
		if err != nil {
			// The parser's message may quote the key, so it is not wrapped.
			return nil, fmt.Errorf("entry %q line %d is a malformed age secret key", entry, i+1)
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("entry %q holds no age secret key", entry)
	}
	return ids, nil
}

// ageKeyService recovers SOPS data keys with in-memory age identities only.
// SOPS' own local key service would fall back to keys found in the
// environment, the home directory and cloud KMS credentials.
type ageKeyService struct {
	identities sopsage.ParsedIdentities
}

var _ sopskeyservice.KeyServiceClient = ageKeyService{}

// Decrypt decrypts the data key held by an age master key of the file.
func (s ageKeyService) Decrypt(_ context.Context, req *sopskeyservice.DecryptRequest, _ ...grpc.CallOption) (*sopskeyservice.DecryptResponse, error) {
	ageKey := req.GetKey().GetAgeKey()
	if ageKey == nil {
		return nil, errors.New("not an age key; only age keys are supported")
	}
	key := &sopsage.MasterKey{
		Recipient:    ageKey.GetRecipient(),
		EncryptedKey: string(req.GetCiphertext()),
	}
	s.identities.ApplyToMasterKey(key)
	plaintext, err := key.Decrypt()
	if err != nil {
		return nil, err
	}
	return &sopskeyservice.DecryptResponse{Plaintext: plaintext}, nil
}

// Encrypt is refused: the controller only ever decrypts.
func (ageKeyService) Encrypt(context.Context, *sopskeyservice.EncryptRequest, ...grpc.CallOption) (*sopskeyservice.EncryptResponse, error) {
	return nil, errors.New("the source-controller does not encrypt SOPS files")
}
