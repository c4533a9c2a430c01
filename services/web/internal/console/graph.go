package console

import (
	"bytes"
	"fmt"
	"html"
	"net/http"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/graph"
)

// The graph picture's geometry, in pixels.
const (
	boxWidth   = 250
	boxHeight  = 42
	columnStep = boxWidth + 70
	rowStep    = boxHeight + 16
	margin     = 16
	labelRunes = 38
)

// liveGraph draws an Application's live resource graph as an SVG image,
// read with the person's own token from the objects its Revision applied
// (the desired Revision's inventory, else the deployed one's). Reads RBAC
// refuses show as unreadable nodes, as in `ksync graph`.
func (c *Console) liveGraph(w http.ResponseWriter, r *http.Request) {
	app, ok := c.getApplication(w, r)
	if !ok {
		return
	}
	ns, name := app.Namespace, app.Name
	var roots []graph.Root
	for _, rev := range []string{app.Status.DesiredRevision, app.Status.DeployedRevision} {
		if rev == "" || len(roots) > 0 {
			continue
		}
		var revision syncv1.Revision
		if err := c.users.Get(r.Context(), client.ObjectKey{Namespace: ns, Name: rev}, &revision); err != nil {
			c.readFailed(w, r, fmt.Sprintf("Revision %s/%s", ns, rev), err)
			return
		}
		roots = graph.RootsOf(&revision)
	}
	g := &graph.Graph{}
	if len(roots) > 0 {
		destination := app.Spec.Destination.Namespace
		if destination == "" {
			destination = app.Namespace
		}
		snap, err := graph.Collect(r.Context(), c.users, destination, roots)
		if err != nil {
			c.readFailed(w, r, fmt.Sprintf("the live objects of Application %s/%s", ns, name), err)
			return
		}
		g = graph.Build(snap)
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	_, _ = w.Write(drawGraph(g))
}

// drawGraph lays the nodes out in columns by their distance from the
// managed objects along the edges (Deployment, ReplicaSet, Pod, ...), in
// the graph's own order within a column, and draws every edge as a line.
// Every text is XML-escaped.
func drawGraph(g *graph.Graph) []byte {
	depth := map[string]int{}
	var queue []string
	for _, n := range g.Nodes {
		if n.Managed {
			depth[n.ID] = 0
			queue = append(queue, n.ID)
		}
	}
	out := map[string][]string{}
	for _, e := range g.Edges {
		out[e.From] = append(out[e.From], e.To)
	}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		for _, to := range out[id] {
			if _, ok := depth[to]; !ok {
				depth[to] = depth[id] + 1
				queue = append(queue, to)
			}
		}
	}
	type place struct{ x, y int }
	at := map[string]place{}
	rows := map[int]int{}
	width, height := 2*margin+boxWidth, 2*margin+boxHeight
	for _, n := range g.Nodes {
		d := depth[n.ID]
		p := place{x: margin + d*columnStep, y: margin + rows[d]*rowStep}
		rows[d]++
		at[n.ID] = p
		width, height = max(width, p.x+boxWidth+margin), max(height, p.y+boxHeight+margin)
	}
	footer := footerLines(g)
	height += len(footer) * 18

	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`,
		width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`, width, height)
	for _, e := range g.Edges {
		from, okFrom := at[e.From]
		to, okTo := at[e.To]
		if !okFrom || !okTo {
			continue
		}
		x1, y1, x2, y2 := from.x+boxWidth, from.y+boxHeight/2, to.x, to.y+boxHeight/2
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#8a96a3" stroke-width="1.5"><title>%s</title></line>`,
			x1, y1, x2, y2, esc(e.From+" "+e.Relation+" "+e.To))
		fmt.Fprintf(&b, `<circle cx="%d" cy="%d" r="3" fill="#8a96a3"/>`, x2, y2)
	}
	for _, n := range g.Nodes {
		p := at[n.ID]
		stroke, fill, dash := nodeColours(n)
		fmt.Fprintf(&b, `<g><title>%s</title><rect x="%d" y="%d" width="%d" height="%d" rx="5" fill="%s" stroke="%s" stroke-width="2"%s/>`,
			esc(n.ID), p.x, p.y, boxWidth, boxHeight, fill, stroke, dash)
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-weight="bold">%s</text>`, p.x+8, p.y+17, esc(clip(n.Label())))
		fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#434c56">%s</text></g>`, p.x+8, p.y+33, esc(clip(nodeNote(n))))
	}
	for i, line := range footer {
		fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#434c56">%s</text>`, margin, height-margin-(len(footer)-1-i)*18, esc(line))
	}
	b.WriteString(`</svg>`)
	return b.Bytes()
}

func footerLines(g *graph.Graph) []string {
	var lines []string
	if len(g.Nodes) == 0 {
		lines = append(lines, "Nothing applied yet: the graph starts from the objects a rollout applied.")
	}
	if len(g.Denied) > 0 {
		lines = append(lines, "Not readable with your token: "+strings.Join(g.Denied, ", "))
	}
	if g.Truncated {
		lines = append(lines, "Truncated: a bound of the guide left objects out.")
	}
	return lines
}

// nodeNote is what a box says under its label.
func nodeNote(n graph.Node) string {
	var parts []string
	if n.Hook != "" {
		parts = append(parts, n.Hook+" hook")
	}
	switch n.Found {
	case graph.Missing:
		parts = append(parts, "not found")
	case graph.Denied:
		parts = append(parts, "not readable")
	case graph.Skipped:
		parts = append(parts, "not read: bound reached")
	}
	if n.Status != "" {
		parts = append(parts, n.Status)
	}
	return strings.Join(parts, ", ")
}

// nodeColours: missing objects red, unread ones grey and dashed, managed
// ones blue, the rest green.
func nodeColours(n graph.Node) (stroke, fill, dash string) {
	switch {
	case n.Found == graph.Missing:
		return "#9b1c1c", "#fdecec", ""
	case n.Found == graph.Denied || n.Found == graph.Skipped:
		return "#8a96a3", "#f3f4f6", ` stroke-dasharray="5 3"`
	case n.Managed:
		return "#1d3557", "#e8eff8", ""
	default:
		return "#1b6e34", "#eef7f0", ""
	}
}

func clip(s string) string {
	if r := []rune(s); len(r) > labelRunes {
		return string(r[:labelRunes-1]) + "…"
	}
	return s
}

func esc(s string) string { return html.EscapeString(s) }
