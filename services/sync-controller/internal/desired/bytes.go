package desired

import (
	"encoding/base64"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// bytesFields are the fields of core kinds whose values the API server
// decodes as base64. It answers a value that is not base64 with an internal
// error (HTTP 500) that comes again on every retry, so the desired state is
// refused here instead, naming the key but never the value.
var bytesFields = map[schema.GroupVersionKind]string{
	{Version: "v1", Kind: "Secret"}:    "data",
	{Version: "v1", Kind: "ConfigMap"}: "binaryData",
}

// bytesProblem says which value of obj's base64 field does not decode, or
// returns "".
func bytesProblem(obj *unstructured.Unstructured) string {
	field, ok := bytesFields[obj.GroupVersionKind()]
	if !ok {
		return ""
	}
	values, ok := obj.Object[field].(map[string]any)
	if !ok {
		return ""
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch v := values[k].(type) {
		case nil:
		case string:
			// The API server decodes with the standard alphabet and padding,
			// skipping line breaks, as base64.StdEncoding does.
			if _, err := base64.StdEncoding.DecodeString(v); err != nil {
				return fmt.Sprintf("%s[%s]: not base64 (%v)", field, k, err)
			}
		default:
			return fmt.Sprintf("%s[%s]: must be a base64 string, not %T", field, k, v)
		}
	}
	return ""
}
