package render

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kuvryn/kuvryn-sync/pkg/desiredstate"
)

// object is one rendered object and where it came from, for messages.
type object struct {
	u *unstructured.Unstructured
	// file is the repository-relative path or chart file.
	file string
	// where is the place inside file: "document 2", "document 1, item 3".
	where string
}

// splitDocuments splits a multi-document YAML (or JSON) file at its "---"
// separators. Empty documents are kept, so indexes match the file.
func splitDocuments(data []byte) ([][]byte, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		docs = append(docs, doc)
	}
}

// decodeObjects parses a YAML or JSON file into objects, skipping empty
// documents and expanding kind: List. sensitive says the data was decrypted:
// parser messages can quote the data, so they are withheld.
func decodeObjects(file string, data []byte, sensitive bool) ([]object, error) {
	docs, err := splitDocuments(data)
	if err != nil {
		return nil, renderFailed(file, "splitting YAML documents: %s", parserDetail(err, sensitive))
	}
	var out []object
	for i, doc := range docs {
		where := fmt.Sprintf("document %d", i+1)
		// Strict: a repeated key would hide one of its values from review.
		j, err := yaml.YAMLToJSONStrict(doc)
		if err != nil {
			return nil, renderFailed(file, "%s is not valid YAML: %s", where, parserDetail(err, sensitive))
		}
		var v any
		if err := utiljson.Unmarshal(j, &v); err != nil {
			return nil, renderFailed(file, "%s is not valid YAML: %s", where, parserDetail(err, sensitive))
		}
		if v == nil {
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, validationFailure(file, "%s is %s, not a Kubernetes object", where, describe(v))
		}
		objs, err := expandList(file, where, m)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

// parserDetail is the parser's message, or a note that it was withheld.
func parserDetail(err error, sensitive bool) string {
	if sensitive {
		return "details withheld because the file was decrypted"
	}
	return err.Error()
}

func describe(v any) string {
	switch v.(type) {
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	default:
		return "a number"
	}
}

// expandList returns the items of a kind: List, or m itself, validated.
func expandList(file, where string, m map[string]any) ([]object, error) {
	u := &unstructured.Unstructured{Object: m}
	if u.GetKind() != "List" {
		if err := validateObject(file, where, u); err != nil {
			return nil, err
		}
		return []object{{u: u, file: file, where: where}}, nil
	}
	raw, found := m["items"]
	if !found || raw == nil {
		return nil, nil
	}
	items, ok := raw.([]any)
	if !ok {
		return nil, validationFailure(file, "%s is a List whose items is %s, not a list", where, describe(raw))
	}
	out := make([]object, 0, len(items))
	for i, item := range items {
		itemWhere := fmt.Sprintf("%s, item %d", where, i+1)
		im, ok := item.(map[string]any)
		if !ok {
			return nil, validationFailure(file, "%s is %s, not a Kubernetes object", itemWhere, describe(item))
		}
		iu := &unstructured.Unstructured{Object: im}
		if err := validateObject(file, itemWhere, iu); err != nil {
			return nil, err
		}
		out = append(out, object{u: iu, file: file, where: itemWhere})
	}
	return out, nil
}

// validateObject refuses objects that cannot be applied or told apart.
func validateObject(file, where string, u *unstructured.Unstructured) error {
	for _, field := range [][]string{{"apiVersion"}, {"kind"}, {"metadata", "name"}} {
		v, found, err := unstructured.NestedFieldNoCopy(u.Object, field...)
		s, isString := v.(string)
		if err != nil || !found || !isString || s == "" {
			return validationFailure(file, "%s%s has no %s", where, kindOf(u), joinField(field))
		}
	}
	if _, err := schema.ParseGroupVersion(u.GetAPIVersion()); err != nil {
		return validationFailure(file, "%s%s has an invalid apiVersion %q", where, kindOf(u), u.GetAPIVersion())
	}
	if ns, found, err := unstructured.NestedFieldNoCopy(u.Object, "metadata", "namespace"); err != nil || (found && ns != nil) {
		if _, ok := ns.(string); !ok {
			return validationFailure(file, "%s%s has a metadata.namespace that is not a string", where, kindOf(u))
		}
	}
	return nil
}

func kindOf(u *unstructured.Unstructured) string {
	if k := u.GetKind(); k != "" {
		return " (a " + k + ")"
	}
	return ""
}

func joinField(field []string) string {
	s := field[0]
	for _, f := range field[1:] {
		s += "." + f
	}
	return s
}

// checkDuplicates refuses two objects with the same group, kind, namespace
// and name: one would silently overwrite the other on apply.
func checkDuplicates(objs []object) error {
	seen := make(map[desiredstate.ObjectID]object, len(objs))
	for _, o := range objs {
		k := desiredstate.IDOf(o.u)
		if first, dup := seen[k]; dup {
			return validationFailure(o.file, "%s defines %s, already defined by %s (%s)", o.where, k, first.file, first.where)
		}
		seen[k] = o
	}
	return nil
}
