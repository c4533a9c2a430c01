// Package desiredstate is the encoding of a rendered desired state, the hand-off
// between the source-controller, which renders an Application into objects,
// and the sync-controller, which applies them.
//
// The objects travel gzip'd in a Secret of type sync.kuvryn.io/desired-state
// under DataKey. Their digest is taken over a canonical encoding, so the same
// objects always give the same digest and the same Secret data, whatever order
// a renderer produced them in, and the Revision named from the digest is
// reused when the same content is rendered again.
package desiredstate

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// DataKey is the key of the desired-state Secret's data holding the
// gzip'd canonical JSON array of objects.
const DataKey = "objects.json.gz"

// MaxDecodedBytes caps the canonical JSON of a desired state. Decode refuses
// data that decompresses to more, so a small Secret cannot expand into an
// unbounded allocation; Encode refuses to produce it.
const MaxDecodedBytes = 64 << 20

// ErrTooLarge is wrapped by the errors of Encode and Decode for a desired
// state larger than MaxDecodedBytes.
var ErrTooLarge = errors.New("desired state too large")

// digestPrefix is the algorithm prefix of every digest.
const digestPrefix = "sha256:"

// revisionHashLen is how many hex digits of the digest name a Revision.
const revisionHashLen = 10

// maxNameLength is the longest DNS subdomain Kubernetes accepts as a name.
const maxNameLength = 253

// Encode returns the canonical encoding of objs: a JSON array sorted by
// identity (group, kind, namespace, name) with object keys sorted, its
// digest ("sha256:" and the hex SHA-256 of that JSON) and data, the gzip of it.
// Objects with the same identity are ordered by their encoding, so the result
// never depends on the order of objs.
func Encode(objs []*unstructured.Unstructured) (data []byte, digest string, err error) {
	canonical, digest, err := canonicalJSON(objs)
	if err != nil {
		return nil, "", err
	}
	// gzip.Writer leaves the header's name and time empty, so the same input
	// always compresses to the same bytes; Reset empties them again.
	var compressed bytes.Buffer
	zw := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(zw)
	zw.Reset(&compressed)
	if _, err := zw.Write(canonical); err != nil {
		return nil, "", fmt.Errorf("compressing desired state: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, "", fmt.Errorf("compressing desired state: %w", err)
	}
	return compressed.Bytes(), digest, nil
}

// gzipWriters are reused across encodes: each holds about 1 MiB of
// compression state, and a new one per encode was half of what the
// source-controller allocated in a large rollout (docs/benchmarks.md).
var gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}

// Digest is the digest Encode gives objs, without compressing them: what
// checks a desired state against the digest a Revision pins needs.
func Digest(objs []*unstructured.Unstructured) (string, error) {
	_, digest, err := canonicalJSON(objs)
	return digest, err
}

// canonicalJSON is the canonical encoding of objs and its digest.
func canonicalJSON(objs []*unstructured.Unstructured) ([]byte, string, error) {
	type entry struct {
		key  ObjectID
		json []byte
	}
	entries := make([]entry, 0, len(objs))
	size := 2 // the brackets of the array
	for i, obj := range objs {
		if obj == nil || obj.Object == nil {
			return nil, "", fmt.Errorf("object %d is empty", i)
		}
		// encoding/json writes map keys sorted, which makes this canonical.
		b, err := json.Marshal(obj.Object)
		if err != nil {
			return nil, "", fmt.Errorf("encoding object %d (%s): %w", i, IDOf(obj), err)
		}
		size += len(b) + 1
		if size > MaxDecodedBytes {
			return nil, "", fmt.Errorf("%w: more than %d bytes once encoded", ErrTooLarge, MaxDecodedBytes)
		}
		entries = append(entries, entry{key: IDOf(obj), json: b})
	}
	sort.Slice(entries, func(i, j int) bool {
		if entries[i].key != entries[j].key {
			return entries[i].key.Less(entries[j].key)
		}
		return bytes.Compare(entries[i].json, entries[j].json) < 0
	})

	var canonical bytes.Buffer
	canonical.Grow(size)
	canonical.WriteByte('[')
	for i, e := range entries {
		if i > 0 {
			canonical.WriteByte(',')
		}
		canonical.Write(e.json)
	}
	canonical.WriteByte(']')

	sum := sha256.Sum256(canonical.Bytes())
	return canonical.Bytes(), digestPrefix + hex.EncodeToString(sum[:]), nil
}

// Decode reverses Encode. It refuses data that is not gzip, that decompresses
// to more than MaxDecodedBytes, or that is not a JSON array of objects.
func Decode(data []byte) ([]*unstructured.Unstructured, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("desired state is not gzip data: %w", err)
	}
	defer zr.Close()
	// Read one byte past the limit to tell "exactly at the limit" from "over".
	plain, err := io.ReadAll(io.LimitReader(zr, MaxDecodedBytes+1))
	if err != nil {
		return nil, fmt.Errorf("decompressing desired state: %w", err)
	}
	if len(plain) > MaxDecodedBytes {
		return nil, fmt.Errorf("%w: decompresses to more than %d bytes", ErrTooLarge, MaxDecodedBytes)
	}

	// utiljson keeps integers as int64, as the rest of Kubernetes expects of
	// unstructured objects, so a decoded object encodes to the same bytes.
	var items []any
	if err := utiljson.Unmarshal(plain, &items); err != nil {
		return nil, fmt.Errorf("desired state is not a JSON array: %w", err)
	}
	objs := make([]*unstructured.Unstructured, 0, len(items))
	for i, item := range items {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("desired state item %d is a %T, not an object", i, item)
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
	return objs, nil
}

// RevisionName names the Revision of app at digest (as returned by Encode):
// "<app>-<first 10 hex digits of the digest>". An app name too long to leave
// room for the suffix is shortened, so the result stays a DNS subdomain of at
// most 253 characters.
func RevisionName(app, digest string) string {
	hash := strings.TrimPrefix(digest, digestPrefix)
	if len(hash) > revisionHashLen {
		hash = hash[:revisionHashLen]
	}
	if limit := maxNameLength - len(hash) - 1; len(app) > limit {
		// A label must end with an alphanumeric character, so a cut that
		// lands after a '-' or '.' drops it too.
		app = strings.TrimRight(app[:limit], "-.")
	}
	return app + "-" + hash
}

// PreviewRevisionName names the preview Revision of app in the named
// preview at commit with desired-state digest: "<app>-<preview>-" and 10
// hex digits of sha256 over digest and commit, so every pushed commit of a
// preview has Revisions of its own and none is ever an Application's
// desired Revision. Long names are shortened as RevisionName does.
func PreviewRevisionName(app, preview, digest, commit string) string {
	sum := sha256.Sum256([]byte(digest + "\n" + commit))
	return RevisionName(app+"-"+preview, digestPrefix+hex.EncodeToString(sum[:]))
}
