package render

import (
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// scrubbedError replaces the message of an error that may quote decrypted
// data or local paths, keeping the original for errors.Is and errors.As.
type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

// minSecretLen is the shortest decrypted value redacted from messages:
// shorter strings are not secrets worth the name, and hiding them would
// garble messages (line numbers, "true", field names).
const minSecretLen = 4

// redactor remembers the values a render must never repeat in an error:
// the strings of every decrypted file and of valuesFrom, which may come
// from Secrets. Library errors (Kustomize, Helm templates, YAML parsers)
// sometimes quote the data they choke on.
type redactor struct {
	values map[string]struct{}
	// roots are local directory prefixes removed from messages, so errors
	// name repository-relative paths and not where a checkout happens to live.
	roots []string
}

func newRedactor(roots ...string) *redactor {
	r := &redactor{values: map[string]struct{}{}}
	for _, root := range roots {
		r.addRoot(root)
	}
	return r
}

// addRoot adds a local directory to remove from messages. Only absolute
// paths are directories of this machine; anything else is left alone.
func (r *redactor) addRoot(root string) {
	if filepath.IsAbs(root) {
		r.roots = append(r.roots, filepath.Clean(root))
	}
}

// addDocument remembers the string values of decrypted data. YAML and JSON
// give their scalars; anything else (dotenv, ini, binary) every line and
// every value after a '='.
func (r *redactor) addDocument(data []byte) {
	docs, err := splitDocuments(data)
	if err == nil {
		parsed := true
		for _, doc := range docs {
			var v any
			if err := yaml.Unmarshal(doc, &v); err != nil {
				parsed = false
				break
			}
			r.addValue(withoutIdentity(v))
		}
		if parsed {
			return
		}
	}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		r.addString(line)
		if _, value, ok := strings.Cut(line, "="); ok {
			r.addString(strings.TrimSpace(value))
		}
	}
}

// withoutIdentity leaves out what names a Kubernetes object (apiVersion,
// kind, metadata.name and namespace) when v is one: those are not secret,
// and messages about the object need them.
func withoutIdentity(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	_, hasAPIVersion := m["apiVersion"]
	_, hasKind := m["kind"]
	if !hasAPIVersion || !hasKind {
		return v
	}
	out := make(map[string]any, len(m))
	for k, e := range m {
		switch k {
		case "apiVersion", "kind":
		case "metadata":
			if meta, ok := e.(map[string]any); ok {
				rest := make(map[string]any, len(meta))
				for mk, mv := range meta {
					if mk != "name" && mk != "namespace" {
						rest[mk] = mv
					}
				}
				out[k] = rest
				continue
			}
			out[k] = e
		default:
			out[k] = e
		}
	}
	return out
}

// addValue remembers every string in v, a decoded YAML or JSON value.
func (r *redactor) addValue(v any) {
	switch t := v.(type) {
	case map[string]any:
		for _, e := range t {
			r.addValue(e)
		}
	case []any:
		for _, e := range t {
			r.addValue(e)
		}
	case string:
		r.addString(t)
		for _, line := range strings.Split(t, "\n") {
			r.addString(strings.TrimSpace(line))
		}
	}
}

func (r *redactor) addString(s string) {
	if len(s) >= minSecretLen {
		r.values[s] = struct{}{}
	}
}

// scrub returns msg without remembered values and local directory prefixes.
func (r *redactor) scrub(msg string) string {
	for _, root := range r.roots {
		msg = strings.ReplaceAll(msg, root+string(filepath.Separator), "")
		msg = strings.ReplaceAll(msg, root, ".")
	}
	if len(r.values) == 0 {
		return msg
	}
	// Longest first, so a value containing another is hidden whole.
	values := make([]string, 0, len(r.values))
	for v := range r.values {
		values = append(values, v)
	}
	sort.Slice(values, func(i, j int) bool {
		if len(values[i]) != len(values[j]) {
			return len(values[i]) > len(values[j])
		}
		return values[i] < values[j]
	})
	for _, v := range values {
		msg = strings.ReplaceAll(msg, v, "[redacted]")
	}
	return msg
}

// scrubError applies scrub to the message of e, keeping e's Reason and File.
func (r *redactor) scrubError(e *Error) *Error {
	msg := e.Err.Error()
	clean := r.scrub(msg)
	file := r.scrub(e.File)
	if clean == msg && file == e.File {
		return e
	}
	return &Error{Reason: e.Reason, File: file, Err: &scrubbedError{msg: clean, err: e.Err}}
}
