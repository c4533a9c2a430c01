package console

import (
	"net/http"
	"strings"
	"testing"

	"github.com/kuvryn/kuvryn-sync/pkg/graph"
)

// TestLiveGraph_DrawnServerSideAsSVG: the Application page's graph picture
// is an SVG drawn on the server from the live objects its Revision applied,
// read with the person's token: a present Service, a missing Deployment;
// a token without rights gets a refusal, not a picture.
func TestLiveGraph_DrawnServerSideAsSVG(t *testing.T) {
	f := start(t)
	f.waitingApplication("shop", nil)
	path := "/applications/" + f.ns + "/shop/graph.svg"

	tests := []struct {
		name    string
		token   string
		status  int
		want    []string
		notWant []string
	}{
		{"viewer", f.token("viewer", true), http.StatusOK,
			[]string{"<svg", "service/api", "deployment.apps/api", "not found", "Service " + f.ns + "/api"}, []string{"<script"}},
		{"no rights", f.token("nobody", false), http.StatusForbidden, []string{`id="refused"`}, []string{"<svg"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := f.do(http.MethodGet, path, []*http.Cookie{f.signIn(tt.token)}, nil)
			if resp.status != tt.status {
				t.Fatalf("status %d, want %d:\n%s", resp.status, tt.status, resp.body)
			}
			for _, w := range tt.want {
				if !strings.Contains(resp.body, w) {
					t.Errorf("answer lacks %q:\n%s", w, resp.body)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(resp.body, w) {
					t.Errorf("answer holds %q", w)
				}
			}
			if tt.status == http.StatusOK && resp.header.Get("Content-Type") != "image/svg+xml" {
				t.Errorf("Content-Type %q", resp.header.Get("Content-Type"))
			}
		})
	}
}

// TestDrawGraph_EscapesAndLaysOutInColumns: every text is escaped, and an
// object sits one column right of what leads to it.
func TestDrawGraph_EscapesAndLaysOutInColumns(t *testing.T) {
	g := &graph.Graph{
		Nodes: []graph.Node{
			{ID: "Deployment.apps ns/web", Managed: true, Found: graph.Present, Status: `<script>alert(1)</script>`},
			{ID: "ReplicaSet.apps ns/web-1", Found: graph.Present},
			{ID: "Pod ns/web-1-a", Found: graph.Denied},
		},
		Edges:  []graph.Edge{{From: "Deployment.apps ns/web", To: "ReplicaSet.apps ns/web-1", Relation: graph.RelOwns}, {From: "ReplicaSet.apps ns/web-1", To: "Pod ns/web-1-a", Relation: graph.RelOwns}},
		Denied: []string{`list pods "<b>"`},
	}
	g.Nodes[0].Kind, g.Nodes[0].Group, g.Nodes[0].Name = "Deployment", "apps", "web"
	svg := string(drawGraph(g))
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;b&gt;", "not readable",
		`<rect x="16" y="16"`, `<rect x="336" y="16"`, `<rect x="656" y="16"`} {
		if !strings.Contains(svg, want) {
			t.Errorf("SVG lacks %q:\n%s", want, svg)
		}
	}
	if strings.Contains(svg, "<script") || strings.Contains(svg, "<b>") {
		t.Errorf("SVG holds unescaped markup:\n%s", svg)
	}
	if empty := string(drawGraph(&graph.Graph{})); !strings.Contains(empty, "Nothing applied yet") {
		t.Errorf("empty graph: %s", empty)
	}
}
