package graph

import (
	"fmt"
	"io"
	"strings"
)

// Label names a node briefly, kubectl style: "deployment.apps/web".
func (n Node) Label() string {
	kind := strings.ToLower(n.Kind)
	if n.Group != "" {
		kind += "." + n.Group
	}
	return kind + "/" + n.Name
}

// note is what the text tree and DOT print beside a node's label.
func (n Node) note() string {
	var parts []string
	if n.Hook != "" {
		parts = append(parts, n.Hook+" hook")
	}
	switch n.Found {
	case Missing:
		parts = append(parts, "not found")
	case Denied:
		parts = append(parts, "not readable")
	case Skipped:
		parts = append(parts, "not read: bound reached")
	}
	if n.Status != "" {
		parts = append(parts, n.Status)
	}
	return strings.Join(parts, ", ")
}

// WriteText prints the graph as a tree under each managed object. An object
// reached twice is printed in full the first time only.
func WriteText(w io.Writer, g *Graph) error {
	t := &tree{g: g, w: w, children: map[string][]Edge{}, index: map[string]int{}, shown: map[string]bool{}}
	for i, n := range g.Nodes {
		t.index[n.ID] = i
	}
	for _, e := range g.Edges {
		t.children[e.From] = append(t.children[e.From], e)
	}
	for _, n := range g.Nodes {
		if n.Managed {
			t.print(n.ID, "", "", "", map[string]bool{})
		}
	}
	if len(g.Denied) > 0 {
		t.printf("Not readable with your permissions: %s\n", strings.Join(g.Denied, ", "))
	}
	if g.Truncated {
		t.printf("Truncated: the reads reached a bound (%d selectors, %d Services' EndpointSlices, %d objects per list, %d referenced, %d in all)\n",
			MaxSelectors, MaxServiceSlices, MaxPerList, MaxReferenced, MaxObjects)
	}
	return t.err
}

type tree struct {
	g        *Graph
	w        io.Writer
	children map[string][]Edge
	index    map[string]int
	shown    map[string]bool
	err      error
}

func (t *tree) printf(format string, args ...any) {
	if t.err == nil {
		_, t.err = fmt.Fprintf(t.w, format, args...)
	}
}

func (t *tree) print(id, relation, first, rest string, path map[string]bool) {
	n := t.g.Nodes[t.index[id]]
	line := first
	if relation != "" {
		line += relation + " "
	}
	line += n.Label()
	if note := n.note(); note != "" {
		line += "  (" + note + ")"
	}
	kids := t.children[id]
	if t.shown[id] && len(kids) > 0 {
		t.printf("%s  [shown above]\n", line)
		return
	}
	t.printf("%s\n", line)
	t.shown[id] = true
	path[id] = true
	defer delete(path, id)
	for i, e := range kids {
		if path[e.To] {
			continue
		}
		branch, indent := "├── ", "│   "
		if i == len(kids)-1 {
			branch, indent = "└── ", "    "
		}
		t.print(e.To, e.Relation, rest+branch, rest+indent, path)
	}
}

// WriteDOT prints the graph in Graphviz's DOT language.
func WriteDOT(w io.Writer, g *Graph) error {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %s {\n", quote("kuvryn-sync "+g.Namespace))
	b.WriteString("  rankdir=LR;\n  node [shape=box, fontname=\"Helvetica\"];\n  edge [fontname=\"Helvetica\", fontsize=10];\n")
	for _, n := range g.Nodes {
		label := n.Label()
		if note := n.note(); note != "" {
			label += "\n" + note
		}
		attrs := []string{"label=" + quote(label)}
		if n.Managed {
			attrs = append(attrs, "penwidth=2")
		}
		switch n.Found {
		case Missing:
			attrs = append(attrs, "style=dashed", "color=red")
		case Denied, Skipped:
			attrs = append(attrs, "style=dotted")
		}
		fmt.Fprintf(&b, "  %s [%s];\n", quote(n.ID), strings.Join(attrs, ", "))
	}
	for _, e := range g.Edges {
		fmt.Fprintf(&b, "  %s -> %s [label=%s];\n", quote(e.From), quote(e.To), quote(e.Relation))
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// quote makes s a DOT string: backslashes and quotes escaped, newlines as \n.
func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}
