// Package ignore applies an Application's ignore rules (spec.ignoreDifferences):
// which fields of which objects Kuvryn Sync leaves to whoever else sets them.
// It is pure: the rollout reconciler reads live state and calls it before
// every dry-run and apply, and before it takes back hand-edited fields.
package ignore

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// Pointer is a parsed JSON pointer (RFC 6901): its unescaped reference tokens.
type Pointer []string

func (p Pointer) String() string {
	var b strings.Builder
	for _, t := range p {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(t))
	}
	return b.String()
}

// identity are the pointers that would make an object unnamed: the API
// server validates them away too, and this is the check for a client that
// bypassed it.
var identity = map[string]bool{"/apiVersion": true, "/kind": true, "/metadata": true, "/metadata/name": true, "/metadata/namespace": true}

// ParsePointer parses one JSON pointer: "/" then tokens separated by "/",
// with "~0" for "~" and "~1" for "/".
func ParsePointer(s string) (Pointer, error) {
	if !strings.HasPrefix(s, "/") {
		return nil, fmt.Errorf("%q does not start with /", s)
	}
	if identity[s] {
		return nil, fmt.Errorf("%q is part of the object's identity, which cannot be ignored", s)
	}
	raw := strings.Split(s[1:], "/")
	p := make(Pointer, 0, len(raw))
	for _, t := range raw {
		var b strings.Builder
		for i := 0; i < len(t); i++ {
			if t[i] != '~' {
				b.WriteByte(t[i])
				continue
			}
			if i+1 == len(t) || (t[i+1] != '0' && t[i+1] != '1') {
				return nil, fmt.Errorf("%q: ~ must be followed by 0 or 1", s)
			}
			b.WriteByte("~/"[t[i+1]-'0'])
			i++
		}
		p = append(p, b.String())
	}
	return p, nil
}

// For returns the pointers of every rule that matches obj, by group, kind
// and, where the rule names them, name and namespace. An unreadable pointer
// is an error naming the rule and the pointer.
func For(rules []syncv1.IgnoreRule, obj *unstructured.Unstructured) ([]Pointer, error) {
	gvk := obj.GroupVersionKind()
	var out []Pointer
	for i, r := range rules {
		if r.Group != gvk.Group || r.Kind != gvk.Kind ||
			(r.Name != "" && r.Name != obj.GetName()) || (r.Namespace != "" && r.Namespace != obj.GetNamespace()) {
			continue
		}
		for j, s := range r.JSONPointers {
			p, err := ParsePointer(s)
			if err != nil {
				return nil, fmt.Errorf("spec.ignoreDifferences[%d].jsonPointers[%d]: %w", i, j, err)
			}
			out = append(out, p)
		}
	}
	return out, nil
}

// Respect returns a copy of desired in which every pointed-to field that
// desired declares holds live's value, or is absent where live has none, so
// that applying it leaves those fields as they are. A field desired does not
// declare stays undeclared, so Kuvryn Sync never comes to share it. An object
// that does not exist yet (live nil) is created as desired says.
func Respect(desired, live *unstructured.Unstructured, ptrs []Pointer) *unstructured.Unstructured {
	if live == nil || len(ptrs) == 0 {
		return desired
	}
	out := desired.DeepCopy()
	for _, p := range ptrs {
		if _, declared := lookup(out.Object, p); !declared {
			continue
		}
		if v, ok := lookup(live.Object, p); ok {
			set(out.Object, p, runtime.DeepCopyJSONValue(v))
		} else {
			remove(out.Object, p)
		}
	}
	return out
}

// lookup finds the value p points to in obj.
func lookup(obj map[string]any, p Pointer) (any, bool) {
	var cur any = obj
	for _, t := range p {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[t]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, ok := index(t, len(c))
			if !ok {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// set replaces the value at p, which lookup found, with v.
func set(obj map[string]any, p Pointer, v any) {
	parent, _ := lookup(obj, p[:len(p)-1])
	switch c := parent.(type) {
	case map[string]any:
		c[p[len(p)-1]] = v
	case []any:
		if i, ok := index(p[len(p)-1], len(c)); ok {
			c[i] = v
		}
	}
}

// remove deletes the field p points to, which lookup found. A list item is
// never removed, since that would shift the items after it.
func remove(obj map[string]any, p Pointer) {
	parent, ok := lookup(obj, p[:len(p)-1])
	if m, isMap := parent.(map[string]any); ok && isMap {
		delete(m, p[len(p)-1])
	}
}

// index reads t as an index into a list of n items.
func index(t string, n int) (int, bool) {
	if t == "" || (len(t) > 1 && t[0] == '0') {
		return 0, false
	}
	i, err := strconv.Atoi(t)
	return i, err == nil && i >= 0 && i < n
}

// Covers reports whether the managed-fields path f is one of ptrs or lies
// under one, reading live to tell which list item an index names: a managed
// field names list items by their keys (k:{"name":"web"}), a value, or an
// index, where a pointer names them by position.
func Covers(f fieldpath.Path, live *unstructured.Unstructured, ptrs []Pointer) bool {
	if live == nil {
		return false
	}
	for _, p := range ptrs {
		if under(f, live.Object, p) {
			return true
		}
	}
	return false
}

func under(f fieldpath.Path, obj map[string]any, p Pointer) bool {
	if len(f) < len(p) {
		return false
	}
	var cur any = obj
	for k, t := range p {
		pe := f[k]
		switch c := cur.(type) {
		case map[string]any:
			if pe.FieldName == nil || *pe.FieldName != t {
				return false
			}
			cur = c[t]
		case []any:
			i, ok := index(t, len(c))
			if !ok || !namesItem(pe, i, c[i]) {
				return false
			}
			cur = c[i]
		default:
			return false
		}
	}
	return true
}

// namesItem reports whether pe names item, the i-th of its list.
func namesItem(pe fieldpath.PathElement, i int, item any) bool {
	switch {
	case pe.Index != nil:
		return *pe.Index == i
	case pe.Value != nil:
		return value.Equals(*pe.Value, value.NewValueInterface(item))
	case pe.Key != nil:
		m, ok := item.(map[string]any)
		if !ok {
			return false
		}
		for _, field := range *pe.Key {
			v, ok := m[field.Name]
			if !ok || !value.Equals(field.Value, value.NewValueInterface(v)) {
				return false
			}
		}
		return true
	}
	return false
}
