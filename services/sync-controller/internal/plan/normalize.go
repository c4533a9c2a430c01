package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/redact"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/validation"
)

// serverMetadata is what the API server writes into metadata on its own;
// none of it is something apply would change.
var serverMetadata = []string{"managedFields", "resourceVersion", "uid", "generation", "creationTimestamp", "selfLink"}

// Normalize returns a deep copy of obj without the fields the API server
// owns (metadata.managedFields, resourceVersion, uid, generation,
// creationTimestamp, selfLink, and status) and without the kubectl
// last-applied annotation, so that a live object and its dry-run compare
// equal when apply would change nothing. An annotations map left empty is
// removed. nil gives nil.
func Normalize(obj *unstructured.Unstructured) *unstructured.Unstructured {
	if obj == nil {
		return nil
	}
	out := obj.DeepCopy()
	delete(out.Object, "status")
	metadata, ok := out.Object["metadata"].(map[string]any)
	if !ok {
		return out
	}
	for _, field := range serverMetadata {
		delete(metadata, field)
	}
	if annotations, ok := metadata["annotations"].(map[string]any); ok {
		delete(annotations, redact.LastAppliedAnnotation)
		if len(annotations) == 0 {
			delete(metadata, "annotations")
		}
	}
	return out
}

// Hash is the sha256, in hex, of the canonical JSON encoding (map keys
// sorted, as encoding/json writes them) of the normalised obj. Every Secret
// value is replaced by its own sha256 first, so Secret values enter the hash
// only as hashes. A nil obj hashes to "", the hash of an absent object.
//
// Hash fails only for values JSON cannot encode, such as NaN, which no API
// server or YAML decoder produces.
func Hash(obj *unstructured.Unstructured) (string, error) {
	if obj == nil {
		return "", nil
	}
	canonical, err := json.Marshal(redact.Replace(Normalize(obj), hashSecretValue).Object)
	if err != nil {
		return "", fmt.Errorf("hash %s: %w", validation.Describe(obj), err)
	}
	sum := sha256.Sum256(canonical)
	return hex.EncodeToString(sum[:]), nil
}

func hashSecretValue(v any) any {
	raw, ok := v.(string)
	if !ok {
		encoded, err := json.Marshal(v)
		if err != nil {
			// Left as is, the value makes Hash's own encoding fail with this error.
			return v
		}
		raw = string(encoded)
	}
	sum := sha256.Sum256([]byte(raw))
	return "sha256:" + hex.EncodeToString(sum[:])
}
