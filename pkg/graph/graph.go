package graph

import (
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/desiredstate"
)

// Relations between objects, as the edges name them.
const (
	RelOwns     = "owns"
	RelSlices   = "slices"
	RelEndpoint = "endpoint"
	RelUses     = "uses"
	RelBinds    = "binds"
	RelRoutes   = "routes"
	RelScales   = "scales"
)

// Node is one live object of the graph.
type Node struct {
	// ID names the object as kubectl users read it: "Deployment.apps shop/web".
	ID string `json:"id"`
	syncv1.ObjectRef
	// Managed objects are in the Revision's inventory.
	Managed bool `json:"managed,omitempty"`
	// Hook is the stage of a hook object.
	Hook string `json:"hook,omitempty"`
	// Found is present, missing, denied (the reader may not read it) or
	// skipped (a bound kept it unread).
	Found Found `json:"found"`
	// Status is a short summary of the live state, such as "Running, 0/1 ready".
	Status string `json:"status,omitempty"`
}

// Edge is one relation From -> To, by Node ID.
type Edge struct {
	From     string `json:"from"`
	To       string `json:"to"`
	Relation string `json:"relation"`
}

// Graph is an Application's live resource graph.
type Graph struct {
	Namespace string `json:"namespace"`
	Nodes     []Node `json:"nodes"`
	Edges     []Edge `json:"edges"`
	// Denied names the reads the reader may not make; the graph stops there.
	Denied []string `json:"denied,omitempty"`
	// Truncated says a bound of the guide left objects out.
	Truncated bool `json:"truncated,omitempty"`
}

// Build turns a Snapshot into its Graph. The same Snapshot always gives the
// same Graph: managed nodes in inventory order, the others by ID, edges by
// their ends.
func Build(s *Snapshot) *Graph {
	b := &builder{s: s, g: &Graph{Namespace: s.Namespace, Denied: s.Denied, Truncated: s.Truncated}, nodes: map[string]int{}, edges: map[Edge]bool{}, byUID: map[types.UID]string{}}
	b.build()
	return b.g
}

type builder struct {
	s     *Snapshot
	g     *Graph
	nodes map[string]int
	edges map[Edge]bool
	byUID map[types.UID]string
}

func (b *builder) node(id desiredstate.ObjectID, version string, found Found, status string) string {
	key := id.String()
	if _, ok := b.nodes[key]; !ok {
		b.nodes[key] = len(b.g.Nodes)
		b.g.Nodes = append(b.g.Nodes, Node{ID: key, ObjectRef: Ref(id, version), Found: found, Status: status})
	}
	return key
}

func (b *builder) edge(from, to, rel string) {
	e := Edge{From: from, To: to, Relation: rel}
	if from != to && !b.edges[e] {
		b.edges[e] = true
		b.g.Edges = append(b.g.Edges, e)
	}
}

func (b *builder) build() {
	s := b.s
	var present []*unstructured.Unstructured
	for _, root := range s.Roots {
		l := s.Managed[root.ID()]
		status := ""
		if l.Found == Present {
			status = Summary(l.Object)
			present = append(present, l.Object)
		}
		key := b.node(root.ID(), root.Version, l.Found, status)
		n := &b.g.Nodes[b.nodes[key]]
		n.Managed, n.Hook = true, root.Hook
		if l.Object != nil && l.Object.GetUID() != "" {
			b.byUID[l.Object.GetUID()] = key
		}
	}
	managed := len(b.g.Nodes)
	for i := range s.ReplicaSets {
		rs := &s.ReplicaSets[i]
		key := b.node(ID("apps", "ReplicaSet", rs.Namespace, rs.Name), "v1", Present, replicaSetStatus(rs))
		b.byUID[rs.UID] = key
	}
	parents := map[string][]string{}
	for i := range s.ReplicaSets {
		rs := &s.ReplicaSets[i]
		key := ID("apps", "ReplicaSet", rs.Namespace, rs.Name).String()
		parents[key] = b.owners(key, rs.OwnerReferences)
	}
	// hasPods marks the owners, and their owners, of Pods in the graph:
	// their Pods show what they refer to, so their templates need not.
	hasPods := map[string]bool{}
	for i := range s.Pods {
		p := &s.Pods[i]
		key := b.node(ID("", "Pod", p.Namespace, p.Name), "v1", Present, PodStatus(p))
		for _, owner := range b.owners(key, p.OwnerReferences) {
			hasPods[owner] = true
			for _, up := range parents[owner] {
				hasPods[up] = true
			}
		}
		b.references(key, p.Namespace, &p.Spec)
	}
	for _, obj := range present {
		key := desiredstate.IDOf(obj).String()
		if t, ok := PodTemplate(obj); ok && !hasPods[key] {
			b.references(key, obj.GetNamespace(), &t.Spec)
		}
		switch obj.GroupVersionKind().GroupKind() {
		case KindService:
			b.service(key, obj.GetName())
		case KindIngress:
			for _, id := range IngressServices(obj) {
				b.edge(key, b.referenced(id, "v1"), RelRoutes)
			}
		case KindHPA:
			if id, version, ok := ScaleTarget(obj); ok {
				b.edge(key, b.referenced(id, version), RelScales)
			}
		}
	}
	rest := b.g.Nodes[managed:]
	sort.Slice(rest, func(i, j int) bool { return rest[i].ID < rest[j].ID })
	sort.Slice(b.g.Edges, func(i, j int) bool {
		a, c := b.g.Edges[i], b.g.Edges[j]
		if a.From != c.From {
			return a.From < c.From
		}
		if a.To != c.To {
			return a.To < c.To
		}
		return a.Relation < c.Relation
	})
}

// owners links the owners that are in the graph to key, and returns them.
func (b *builder) owners(key string, refs []metav1.OwnerReference) []string {
	var out []string
	for _, o := range refs {
		if owner, ok := b.byUID[o.UID]; ok {
			b.edge(owner, key, RelOwns)
			out = append(out, owner)
		}
	}
	return out
}

// referenced is the node of a referenced object, whatever its read gave.
func (b *builder) referenced(id desiredstate.ObjectID, version string) string {
	l, ok := b.s.Lookup(id)
	if !ok {
		l.Found = Skipped
	}
	status := ""
	if l.Found == Present && l.Object != nil {
		status = Summary(l.Object)
	}
	return b.node(id, version, l.Found, status)
}

func (b *builder) references(from, namespace string, spec *corev1.PodSpec) {
	for _, r := range PodReferences(namespace, spec) {
		to := b.referenced(r.ID, "v1")
		b.edge(from, to, RelUses)
		var pvc corev1.PersistentVolumeClaim
		if GroupKind(r.ID) == KindPVC && b.s.Object(r.ID, &pvc) && pvc.Spec.VolumeName != "" {
			b.edge(to, b.referenced(ID("", KindPV.Kind, "", pvc.Spec.VolumeName), "v1"), RelBinds)
		}
	}
}

// service links a Service to its EndpointSlices and those to their Pods.
func (b *builder) service(key, name string) {
	for i := range b.s.EndpointSlices {
		es := &b.s.EndpointSlices[i]
		if es.Labels[discoveryv1.LabelServiceName] != name {
			continue
		}
		slice := b.node(ID("discovery.k8s.io", "EndpointSlice", es.Namespace, es.Name), "v1", Present, sliceStatus(es))
		b.edge(key, slice, RelSlices)
		for _, ep := range es.Endpoints {
			if ep.TargetRef == nil || ep.TargetRef.Kind != "Pod" {
				continue
			}
			pod := ID("", "Pod", es.Namespace, ep.TargetRef.Name)
			if _, listed := b.nodes[pod.String()]; listed {
				b.edge(slice, pod.String(), RelEndpoint)
			}
		}
	}
}

// Summary is a short description of an object's live state.
func Summary(obj *unstructured.Unstructured) string {
	switch obj.GroupVersionKind().GroupKind() {
	case KindDeployment:
		var d appsv1.Deployment
		if convert(obj, &d) {
			return fmt.Sprintf("%d/%d available", d.Status.AvailableReplicas, replicas(d.Spec.Replicas))
		}
	case KindStatefulSet:
		var s appsv1.StatefulSet
		if convert(obj, &s) {
			return fmt.Sprintf("%d/%d ready", s.Status.ReadyReplicas, replicas(s.Spec.Replicas))
		}
	case KindDaemonSet:
		var d appsv1.DaemonSet
		if convert(obj, &d) {
			return fmt.Sprintf("%d/%d available", d.Status.NumberAvailable, d.Status.DesiredNumberScheduled)
		}
	case KindPVC:
		var pvc corev1.PersistentVolumeClaim
		if convert(obj, &pvc) {
			return string(pvc.Status.Phase)
		}
	case KindPV:
		var pv corev1.PersistentVolume
		if convert(obj, &pv) {
			return string(pv.Status.Phase)
		}
	}
	return ""
}

func replicas(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}

func replicaSetStatus(rs *appsv1.ReplicaSet) string {
	return fmt.Sprintf("%d/%d ready", rs.Status.ReadyReplicas, replicas(rs.Spec.Replicas))
}

// PodStatus is a Pod's phase and how many of its containers are ready.
func PodStatus(p *corev1.Pod) string {
	ready := 0
	for _, c := range p.Status.ContainerStatuses {
		if c.Ready {
			ready++
		}
	}
	phase := string(p.Status.Phase)
	if phase == "" {
		phase = string(corev1.PodPending)
	}
	return fmt.Sprintf("%s, %d/%d ready", phase, ready, len(p.Spec.Containers))
}

func sliceStatus(es *discoveryv1.EndpointSlice) string {
	ready := 0
	for _, ep := range es.Endpoints {
		if ep.Conditions.Ready == nil || *ep.Conditions.Ready {
			ready++
		}
	}
	return fmt.Sprintf("%d/%d endpoints ready", ready, len(es.Endpoints))
}
