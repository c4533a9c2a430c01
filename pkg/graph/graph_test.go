package graph

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kuvryn/kuvryn-sync/pkg/desiredstate"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// The live objects of one Application: a Deployment whose Pod mounts a
// claim and a missing ConfigMap and reads a Secret the reader may not get,
// a Service with its EndpointSlice, an Ingress and a HorizontalPodAutoscaler.
const managedYAML = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, uid: dep}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: app, image: web, envFrom: [{secretRef: {name: db}}]}]
      volumes:
      - {name: config, configMap: {name: settings}}
      - {name: data, persistentVolumeClaim: {claimName: data}}
status: {availableReplicas: 0}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop, uid: svc}
spec: {selector: {app: web}, ports: [{port: 80}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: shop, uid: ing}
spec:
  rules:
  - http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: shop, uid: hpa}
spec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}, maxReplicas: 3}
`

const liveYAML = `
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web-5d8f, namespace: shop, uid: rs, ownerReferences: [{kind: Deployment, name: web, uid: dep, apiVersion: apps/v1}]}
spec: {replicas: 1, selector: {matchLabels: {app: web}}, template: {spec: {containers: [{name: app, image: web}]}}}
status: {readyReplicas: 0}
---
apiVersion: v1
kind: Pod
metadata: {name: web-5d8f-x2x9q, namespace: shop, uid: pod, labels: {app: web}, ownerReferences: [{kind: ReplicaSet, name: web-5d8f, uid: rs, apiVersion: apps/v1}]}
spec:
  containers: [{name: app, image: web, envFrom: [{secretRef: {name: db}}]}]
  volumes:
  - {name: config, configMap: {name: settings}}
  - {name: data, persistentVolumeClaim: {claimName: data}}
status:
  phase: Pending
  containerStatuses: [{name: app, ready: false, image: web, imageID: "", restartCount: 0, state: {waiting: {reason: ContainerCreating}}}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-abcde, namespace: shop, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
endpoints:
- addresses: [10.0.0.5]
  conditions: {ready: false}
  targetRef: {kind: Pod, namespace: shop, name: web-5d8f-x2x9q}
`

func objects(t *testing.T, docs string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(docs, "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		out = append(out, u)
	}
	return out
}

// sampleSnapshot is what a collector reading as an account without get on
// Secrets would have read of the sample Application.
func sampleSnapshot(t *testing.T) *Snapshot {
	t.Helper()
	s := &Snapshot{Namespace: "shop", Managed: map[desiredstate.ObjectID]Lookup{}, Referenced: map[desiredstate.ObjectID]Lookup{}, Denied: []string{"get secrets"}}
	for _, u := range objects(t, managedYAML) {
		id := desiredstate.IDOf(u)
		s.Roots = append(s.Roots, Root{ObjectRef: Ref(id, u.GroupVersionKind().Version)})
		s.Managed[id] = Lookup{Found: Present, Object: u}
	}
	for _, u := range objects(t, liveYAML) {
		switch u.GetKind() {
		case "ReplicaSet":
			var rs appsv1.ReplicaSet
			convert(u, &rs)
			s.ReplicaSets = append(s.ReplicaSets, rs)
		case "Pod":
			var p corev1.Pod
			convert(u, &p)
			s.Pods = append(s.Pods, p)
		case "EndpointSlice":
			var es discoveryv1.EndpointSlice
			convert(u, &es)
			s.EndpointSlices = append(s.EndpointSlices, es)
		}
	}
	claim := objects(t, `
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: shop}
spec: {volumeName: pv-data}
status: {phase: Bound}`)[0]
	s.Referenced[ID("", "ConfigMap", "shop", "settings")] = Lookup{Found: Missing}
	s.Referenced[ID("", "Secret", "shop", "db")] = Lookup{Found: Denied}
	s.Referenced[ID("", "PersistentVolumeClaim", "shop", "data")] = Lookup{Found: Present, Object: claim}
	s.Referenced[ID("", "PersistentVolume", "", "pv-data")] = Lookup{Found: Denied}
	return s
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run go test -update after checking it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func TestBuild_LinksEveryRelationOfTheGuide(t *testing.T) {
	g := Build(sampleSnapshot(t))
	want := []Edge{
		{"Deployment.apps shop/web", "ReplicaSet.apps shop/web-5d8f", RelOwns},
		{"EndpointSlice.discovery.k8s.io shop/web-abcde", "Pod shop/web-5d8f-x2x9q", RelEndpoint},
		{"HorizontalPodAutoscaler.autoscaling shop/web", "Deployment.apps shop/web", RelScales},
		{"Ingress.networking.k8s.io shop/web", "Service shop/web", RelRoutes},
		{"PersistentVolumeClaim shop/data", "PersistentVolume pv-data", RelBinds},
		{"Pod shop/web-5d8f-x2x9q", "ConfigMap shop/settings", RelUses},
		{"Pod shop/web-5d8f-x2x9q", "PersistentVolumeClaim shop/data", RelUses},
		{"Pod shop/web-5d8f-x2x9q", "Secret shop/db", RelUses},
		{"ReplicaSet.apps shop/web-5d8f", "Pod shop/web-5d8f-x2x9q", RelOwns},
		{"Service shop/web", "EndpointSlice.discovery.k8s.io shop/web-abcde", RelSlices},
	}
	var got []string
	for _, e := range g.Edges {
		got = append(got, e.From+" -"+e.Relation+"-> "+e.To)
	}
	var wantS []string
	for _, e := range want {
		wantS = append(wantS, e.From+" -"+e.Relation+"-> "+e.To)
	}
	if strings.Join(got, "\n") != strings.Join(wantS, "\n") {
		t.Errorf("edges:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantS, "\n"))
	}
	found := map[string]Found{}
	for _, n := range g.Nodes {
		found[n.ID] = n.Found
	}
	for id, want := range map[string]Found{"ConfigMap shop/settings": Missing, "Secret shop/db": Denied, "PersistentVolume pv-data": Denied, "Pod shop/web-5d8f-x2x9q": Present} {
		if found[id] != want {
			t.Errorf("%s found %q, want %q", id, found[id], want)
		}
	}
}

func TestBuild_SameSnapshotSameGraph(t *testing.T) {
	var first bytes.Buffer
	if err := WriteDOT(&first, Build(sampleSnapshot(t))); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		var again bytes.Buffer
		if err := WriteDOT(&again, Build(sampleSnapshot(t))); err != nil {
			t.Fatal(err)
		}
		if again.String() != first.String() {
			t.Fatalf("graph changed between builds:\n%s\n---\n%s", again.String(), first.String())
		}
	}
}

func TestWriteText_PrintsATreeUnderEachManagedObject(t *testing.T) {
	var out bytes.Buffer
	if err := WriteText(&out, Build(sampleSnapshot(t))); err != nil {
		t.Fatal(err)
	}
	golden(t, "tree", out.String())
}

func TestWriteDOT_IsAcceptedByGraphviz(t *testing.T) {
	dot, err := exec.LookPath("dot")
	if err != nil {
		t.Skip("Graphviz dot is not installed (apt-get install graphviz); .ci/run installs it")
	}
	var out bytes.Buffer
	if err := WriteDOT(&out, Build(sampleSnapshot(t))); err != nil {
		t.Fatal(err)
	}
	golden(t, "graph.dot", out.String())
	cmd := exec.Command(dot, "-Tsvg")
	cmd.Stdin = &out
	var svg, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &svg, &stderr
	if err := cmd.Run(); err != nil || stderr.Len() > 0 {
		t.Fatalf("dot -Tsvg: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(svg.String(), "<svg") || !strings.Contains(svg.String(), "deployment.apps/web") {
		t.Errorf("dot -Tsvg gave no SVG of the graph:\n%s", svg.String())
	}
}
