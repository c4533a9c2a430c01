// Package redact hides Secret values from everything Kuvryn Sync shows:
// plan diffs, status and CLI output.
//
// A redacted value is a fixed marker, never a function of the value. Even a
// full sha256 of a low-entropy value (a PIN, "true", a short password) is
// reversed by guessing, so hashes are not shown. What a reviewer needs is
// whether a value changes, and Pair tells that by comparing the two sides
// before both are replaced.
package redact

import (
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// LastAppliedAnnotation is where kubectl apply keeps a copy of the applied
// object, Secret values included.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// IsSecret reports whether obj is a core Secret. An unparsable apiVersion
// counts as core, so that doubt redacts rather than reveals.
func IsSecret(obj *unstructured.Unstructured) bool {
	return obj != nil && isCore(obj.Object, "Secret")
}

// Object returns a deep copy of obj in which every Secret value is replaced
// by syncv1.RedactedMarker: each entry of data and stringData (or the whole field if it is
// not a map), and the kubectl last-applied annotation, which repeats them.
// Secrets inside lists (List, SecretList, any object with items) are
// redacted as well. Other objects are copied unchanged; nil gives nil.
func Object(obj *unstructured.Unstructured) *unstructured.Unstructured {
	return Replace(obj, func(any) any { return syncv1.RedactedMarker })
}

// Replace returns a deep copy of obj in which every Secret value that Object
// redacts is replaced by conceal(value). The plan engine uses it to let
// Secret values enter hashes only as hashes. nil gives nil.
func Replace(obj *unstructured.Unstructured, conceal func(value any) any) *unstructured.Unstructured {
	if obj == nil {
		return nil
	}
	out := obj.DeepCopy()
	walk(out.Object, false, func(_ slot, v any) any { return conceal(v) })
	return out
}

// Pair redacts the live and desired (dry-run) states of one object so that a
// diff of the two still shows which Secret values change: a value equal on
// both sides becomes syncv1.RedactedUnchangedMarker on both; a changed value becomes
// syncv1.RedactedOldMarker and syncv1.RedactedNewMarker; a value on one side only becomes syncv1.RedactedMarker. Unless
// both are Secrets, each side is redacted as Object would. Either may be
// nil, which stays nil. The inputs are not modified.
func Pair(live, desired *unstructured.Unstructured) (*unstructured.Unstructured, *unstructured.Unstructured) {
	if !IsSecret(live) || !IsSecret(desired) {
		return Object(live), Object(desired)
	}
	outLive, outDesired := live.DeepCopy(), desired.DeepCopy()
	liveValues, desiredValues := values(outLive.Object), values(outDesired.Object)
	compare := func(other map[slot]any, changed string) func(slot, any) any {
		return func(s slot, v any) any {
			o, ok := other[s]
			switch {
			case !ok:
				return syncv1.RedactedMarker
			case reflect.DeepEqual(v, o):
				return syncv1.RedactedUnchangedMarker
			default:
				return changed
			}
		}
	}
	concealSecret(outLive.Object, compare(desiredValues, syncv1.RedactedOldMarker))
	concealSecret(outDesired.Object, compare(liveValues, syncv1.RedactedNewMarker))
	return outLive, outDesired
}

// slot is where a Secret keeps one value.
type slot struct {
	field string
	key   string
	// whole is set when the field is not a map and is concealed as one value.
	whole bool
}

const annotationsField = "metadata.annotations"

// walk conceals the Secret values of obj and of the items of any list it is.
// Items of a SecretList are Secrets even when, as the API server serves
// them, they carry no kind.
func walk(obj map[string]any, secret bool, conceal func(slot, any) any) {
	if secret || isCore(obj, "Secret") {
		concealSecret(obj, conceal)
	}
	items, ok := obj["items"].([]any)
	if !ok {
		return
	}
	itemsAreSecrets := isCore(obj, "SecretList")
	for _, item := range items {
		if m, ok := item.(map[string]any); ok {
			walk(m, itemsAreSecrets, conceal)
		}
	}
}

// concealSecret replaces, in place, every value of one Secret.
func concealSecret(secret map[string]any, conceal func(slot, any) any) {
	for _, field := range []string{"data", "stringData"} {
		v, ok := secret[field]
		if !ok || v == nil {
			continue
		}
		entries, ok := v.(map[string]any)
		if !ok {
			secret[field] = conceal(slot{field: field, whole: true}, v)
			continue
		}
		for key, value := range entries {
			entries[key] = conceal(slot{field: field, key: key}, value)
		}
	}
	metadata, _ := secret["metadata"].(map[string]any)
	annotations, _ := metadata["annotations"].(map[string]any)
	if v, ok := annotations[LastAppliedAnnotation]; ok {
		annotations[LastAppliedAnnotation] = conceal(slot{field: annotationsField, key: LastAppliedAnnotation}, v)
	}
}

// values collects the Secret values of secret by slot. It writes each value
// back in place, so secret must be a copy the caller owns.
func values(secret map[string]any) map[slot]any {
	found := make(map[slot]any)
	concealSecret(secret, func(s slot, v any) any {
		found[s] = v
		return v
	})
	return found
}

func isCore(obj map[string]any, kind string) bool {
	k, _ := obj["kind"].(string)
	if k != kind {
		return false
	}
	apiVersion, _ := obj["apiVersion"].(string)
	gv, _ := schema.ParseGroupVersion(apiVersion)
	return gv.Group == ""
}
