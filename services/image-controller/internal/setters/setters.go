// Package setters finds Flux-compatible image policy setter markers in YAML,
// such as
//
//	image: ghcr.io/acme/api:1.0.0 # {"$imagepolicy": "payments:api"}
//
// and replaces the values they mark. It works line by line, so every byte
// outside a replaced value (comments, ordering, quoting, indentation, line
// endings) stays as it was; a YAML round trip would reformat the file.
package setters

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Field says which part of the selected image a marker writes.
type Field int

const (
	// FieldImage writes name:tag@digest ("ns:policy").
	FieldImage Field = iota
	// FieldTag writes the tag ("ns:policy:tag").
	FieldTag
	// FieldName writes the image name ("ns:policy:name").
	FieldName
	// FieldDigest writes the digest ("ns:policy:digest"), as a
	// kustomization's images[].digest holds it.
	FieldDigest
)

// Marker is one setter comment on a line holding a scalar value.
type Marker struct {
	// Line is 1-based.
	Line      int
	Namespace string
	Policy    string
	Field     Field
	// Value is the scalar's current value, without quotes.
	Value string

	// start and end delimit Value inside the line.
	start, end int
}

// Ref is the marker's policy as namespace:name.
func (m Marker) Ref() string { return m.Namespace + ":" + m.Policy }

// Image is a selected image: name:tag@digest.
type Image struct {
	Name, Tag, Digest string
}

// String is name:tag@digest, the form status.latestImage and full markers use.
func (i Image) String() string {
	s := i.Name + ":" + i.Tag
	if i.Digest != "" {
		s += "@" + i.Digest
	}
	return s
}

// value is what a marker of field f writes; ok is false when the image
// lacks that part (a digest marker and an image selected without digest).
func (i Image) value(f Field) (v string, ok bool) {
	switch f {
	case FieldTag:
		return i.Tag, true
	case FieldName:
		return i.Name, true
	case FieldDigest:
		return i.Digest, i.Digest != ""
	default:
		return i.String(), true
	}
}

// ParseImage splits name:tag@digest. ok is false when the tag is missing.
func ParseImage(s string) (Image, bool) {
	var img Image
	if at := strings.LastIndexByte(s, '@'); at >= 0 {
		s, img.Digest = s[:at], s[at+1:]
	}
	colon := strings.LastIndexByte(s, ':')
	if colon < 0 || colon < strings.LastIndexByte(s, '/') || colon == len(s)-1 || colon == 0 {
		return Image{}, false
	}
	img.Name, img.Tag = s[:colon], s[colon+1:]
	return img, true
}

// Change is one replaced value.
type Change struct {
	Marker
	New string
}

// Result is what Apply did to one file.
type Result struct {
	// Changed lists the values replaced, in line order.
	Changed []Change
	// Refused lists markers naming a policy in another namespace.
	Refused []Marker
	// Unresolved lists markers naming a policy with no selected image, or
	// digest markers whose policy's image has no digest.
	Unresolved []Marker
}

// Find returns the valid markers in data, in line order. A marker with more
// than three colon-separated parts, a third part other than tag, name or
// digest, or an empty part is not a marker and is left alone.
func Find(data []byte) []Marker {
	var out []Marker
	eachLine(data, func(_ int, m Marker) { out = append(out, m) })
	return out
}

// Apply replaces the values marked in data. A marker may only name policies
// in namespace; images maps a policy name in that namespace to its selected
// image. out is data itself when nothing changed.
func Apply(data []byte, namespace string, images map[string]Image) (out []byte, res Result) {
	type edit struct {
		offset, start, end int
		value              string
	}
	var edits []edit
	eachLine(data, func(offset int, m Marker) {
		if m.Namespace != namespace {
			res.Refused = append(res.Refused, m)
			return
		}
		img, selected := images[m.Policy]
		v, ok := img.value(m.Field)
		if !selected || !ok {
			res.Unresolved = append(res.Unresolved, m)
			return
		}
		if v == m.Value {
			return
		}
		res.Changed = append(res.Changed, Change{Marker: m, New: v})
		edits = append(edits, edit{offset, m.start, m.end, v})
	})
	if len(edits) == 0 {
		return data, res
	}
	var b bytes.Buffer
	b.Grow(len(data))
	last := 0
	for _, e := range edits {
		b.Write(data[last : e.offset+e.start])
		b.WriteString(e.value)
		last = e.offset + e.end
	}
	b.Write(data[last:])
	return b.Bytes(), res
}

// eachLine calls fn with the byte offset of every line holding a valid
// marker. Lines inside block scalars (| and >) are text, not YAML, and are
// skipped.
func eachLine(data []byte, fn func(offset int, m Marker)) {
	offset := 0
	blockIndent := -1
	for n := 1; offset < len(data); n++ {
		end := bytes.IndexByte(data[offset:], '\n')
		next := len(data)
		if end >= 0 {
			next = offset + end + 1
			end += offset
		} else {
			end = len(data)
		}
		line := string(bytes.TrimSuffix(data[offset:end], []byte("\r")))
		indent := len(line) - len(strings.TrimLeft(line, " "))
		blank := strings.TrimSpace(line) == ""
		switch {
		case blockIndent >= 0 && (blank || indent > blockIndent):
		default:
			m, block, ok := parseLine(line)
			if ok {
				m.Line = n
				fn(offset, m)
			}
			blockIndent = block
		}
		offset = next
	}
}

// parseLine finds `key: value # marker` or `- value # marker` in one line.
// When the line's value starts a block scalar, block is the indentation its
// text lines exceed: the column of the key, or of the last `- ` without one.
// In `- patch: |` that is the column of patch, so a `target:` under it ends
// the text. block is -1 otherwise.
func parseLine(line string) (m Marker, block int, ok bool) {
	i := skipSpaces(line, 0)
	parent := -1
	for strings.HasPrefix(line[i:], "- ") {
		parent = i
		i = skipSpaces(line, i+2)
	}
	if i < len(line) && line[i] == '#' {
		return Marker{}, -1, false
	}
	if k, ok := keyEnd(line, i); ok {
		parent = i
		i = skipSpaces(line, k)
	} else if parent < 0 {
		return Marker{}, -1, false
	}
	if i >= len(line) {
		return Marker{}, -1, false
	}
	start, end, after, ok := scalar(line, i)
	if !ok {
		if blockIndicator(line, i) {
			return Marker{}, parent, false
		}
		return Marker{}, -1, false
	}
	hash := skipSpaces(line, after)
	if hash == after || hash >= len(line) || line[hash] != '#' {
		return Marker{}, -1, false
	}
	ns, policy, field, ok := parseMarker(line[hash+1:])
	if !ok {
		return Marker{}, -1, false
	}
	return Marker{Namespace: ns, Policy: policy, Field: field, Value: line[start:end], start: start, end: end}, -1, true
}

// blockIndicator reports whether the value at line[i:] starts a block
// scalar: | or >, after a tag (!!str) and an anchor (&text) if it has them.
func blockIndicator(line string, i int) bool {
	for n := 0; n < 2 && i < len(line) && (line[i] == '!' || line[i] == '&'); n++ {
		for i < len(line) && line[i] != ' ' && line[i] != '\t' {
			i++
		}
		i = skipSpaces(line, i)
	}
	return i < len(line) && (line[i] == '|' || line[i] == '>')
}

func skipSpaces(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// keyEnd returns the index just after `key:` when line[i:] is a mapping
// entry with a plain or quoted key and an inline value.
func keyEnd(line string, i int) (int, bool) {
	if i >= len(line) {
		return 0, false
	}
	k := i
	if line[i] == '"' || line[i] == '\'' {
		_, end, ok := quoted(line, i)
		if !ok {
			return 0, false
		}
		k = end
	} else {
		for k < len(line) && line[k] != ':' {
			if line[k] == '#' && k > i && (line[k-1] == ' ' || line[k-1] == '\t') {
				return 0, false
			}
			k++
		}
	}
	if k >= len(line) || line[k] != ':' || k+1 >= len(line) || (line[k+1] != ' ' && line[k+1] != '\t') {
		return 0, false
	}
	return k + 1, true
}

// scalar locates the value starting at line[i]: start and end delimit its
// text (inside quotes when quoted), after is the index past it.
func scalar(line string, i int) (start, end, after int, ok bool) {
	switch line[i] {
	case '"', '\'':
		end, after, ok := quoted(line, i)
		if !ok {
			return 0, 0, 0, false
		}
		return i + 1, end - 1, after, true
	case '{', '[', '&', '*', '!', '|', '>', '%', '@', '`', '#', ',', '?', ':':
		// Flow collections, anchors, aliases, tags, block scalars and
		// reserved indicators are not values a setter can rewrite in place.
		return 0, 0, 0, false
	}
	j := i
	for j < len(line) {
		if (line[j] == ' ' || line[j] == '\t') && j+1 < len(line) && strings.HasPrefix(line[skipSpaces(line, j):], "#") {
			break
		}
		if line[j] == ':' && (j+1 == len(line) || line[j+1] == ' ' || line[j+1] == '\t') {
			return 0, 0, 0, false
		}
		j++
	}
	return i, j, j, true
}

// quoted returns the index just past the closing quote of the quoted scalar
// at line[i] as end, and the same as after. A double-quoted value with
// escapes is refused: rewriting it in place could change its meaning.
func quoted(line string, i int) (end, after int, ok bool) {
	q := line[i]
	for j := i + 1; j < len(line); j++ {
		switch {
		case q == '"' && line[j] == '\\':
			return 0, 0, false
		case line[j] == q && q == '\'' && j+1 < len(line) && line[j+1] == '\'':
			return 0, 0, false
		case line[j] == q:
			return j + 1, j + 1, true
		}
	}
	return 0, 0, false
}

// parseMarker reads the comment text after '#': exactly one JSON object with
// the single key "$imagepolicy" whose value is ns:name, ns:name:tag,
// ns:name:name or ns:name:digest.
func parseMarker(comment string) (ns, policy string, field Field, ok bool) {
	comment = strings.TrimSpace(comment)
	if !strings.HasPrefix(comment, "{") || !strings.Contains(comment, "$imagepolicy") {
		return "", "", 0, false
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(comment), &obj); err != nil || len(obj) != 1 {
		return "", "", 0, false
	}
	var ref string
	if err := json.Unmarshal(obj["$imagepolicy"], &ref); err != nil {
		return "", "", 0, false
	}
	parts := strings.Split(ref, ":")
	switch {
	case len(parts) < 2 || len(parts) > 3:
		return "", "", 0, false
	case len(parts) == 3 && parts[2] == "tag":
		field = FieldTag
	case len(parts) == 3 && parts[2] == "name":
		field = FieldName
	case len(parts) == 3 && parts[2] == "digest":
		field = FieldDigest
	case len(parts) == 3:
		return "", "", 0, false
	}
	for _, p := range parts[:2] {
		if p == "" || strings.TrimSpace(p) != p {
			return "", "", 0, false
		}
	}
	return parts[0], parts[1], field, true
}
