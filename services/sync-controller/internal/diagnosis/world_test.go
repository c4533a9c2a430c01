package diagnosis

import (
	"encoding/json"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/desiredstate"
	"github.com/kuvryn/kuvryn-sync/pkg/graph"
)

const ns = "shop"

// world builds the Snapshot a collector would have read, for the engine's
// table tests: every list allowed and made unless a test says otherwise.
type world struct{ s *graph.Snapshot }

func newWorld() *world {
	return &world{s: &graph.Snapshot{
		Namespace:       ns,
		Managed:         map[desiredstate.ObjectID]graph.Lookup{},
		Referenced:      map[desiredstate.ObjectID]graph.Lookup{},
		Listed:          map[string]bool{"pods": true, "replicasets": true, "endpointslices": true},
		ListedSelectors: map[string]bool{},
		ListedSlices:    map[string]bool{},
	}}
}

// managed adds a managed object, live, read whole.
func (w *world) managed(apiVersion, kind string, obj any, hook string) *world {
	u := unstr(obj, apiVersion, kind)
	id := desiredstate.IDOf(u)
	w.s.Roots = append(w.s.Roots, graph.Root{ObjectRef: graph.Ref(id, u.GroupVersionKind().Version), Hook: hook})
	w.s.Managed[id] = graph.Lookup{Found: graph.Present, Object: u}
	if sel, ok := graph.PodSelector(u); ok {
		w.s.ListedSelectors[sel.String()] = w.s.Listed["pods"]
		if kind == "Service" {
			w.s.ListedSlices[u.GetName()] = w.s.Listed["endpointslices"]
		}
	}
	return w
}

// gone adds a managed object the API server says does not exist.
func (w *world) gone(group, version, kind, name string) *world {
	id := graph.ID(group, kind, ns, name)
	w.s.Roots = append(w.s.Roots, graph.Root{ObjectRef: graph.Ref(id, version)})
	w.s.Managed[id] = graph.Lookup{Found: graph.Missing}
	return w
}

func (w *world) deny(reads ...string) *world {
	for _, r := range reads {
		w.s.Denied = append(w.s.Denied, r)
		if res, ok := map[string]string{"list pods": "pods", "list replicasets": "replicasets", "list endpointslices": "endpointslices"}[r]; ok {
			w.s.Listed[res] = false
			for k := range w.s.ListedSelectors {
				if res == "pods" {
					w.s.ListedSelectors[k] = false
				}
			}
			for k := range w.s.ListedSlices {
				if res == "endpointslices" {
					w.s.ListedSlices[k] = false
				}
			}
		}
	}
	sort.Strings(w.s.Denied)
	return w
}

func (w *world) replicaSets(rs ...appsv1.ReplicaSet) *world {
	w.s.ReplicaSets = append(w.s.ReplicaSets, rs...)
	return w
}

func (w *world) pods(ps ...corev1.Pod) *world {
	w.s.Pods = append(w.s.Pods, ps...)
	return w
}

func (w *world) slices(es ...discoveryv1.EndpointSlice) *world {
	w.s.EndpointSlices = append(w.s.EndpointSlices, es...)
	return w
}

// ref records the read of a referenced object: obj nil with Missing,
// Denied or Skipped, else present.
func (w *world) ref(group, kind, namespace, name string, found graph.Found, obj any, apiVersion string) *world {
	l := graph.Lookup{Found: found}
	if obj != nil {
		l.Object = unstr(obj, apiVersion, kind)
	}
	w.s.Referenced[graph.ID(group, kind, namespace, name)] = l
	return w
}

// unstr turns a typed object, by value, into its unstructured form.
func unstr(obj any, apiVersion, kind string) *unstructured.Unstructured {
	raw, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(raw, &u.Object); err != nil {
		panic(err)
	}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	return u
}

func objMeta(name string, uid string, owner ...metav1.OwnerReference) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid), OwnerReferences: owner,
		Labels: map[string]string{"app": "web"}}
}

func owner(kind, name, uid string) metav1.OwnerReference {
	return metav1.OwnerReference{Kind: kind, Name: name, UID: types.UID(uid), Controller: ptr.To(true)}
}

var webSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}

func template(spec corev1.PodSpec) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}, Spec: spec}
}

func appContainer() corev1.Container {
	return corev1.Container{Name: "app", Image: "ghcr.io/acme/web:1.0.0", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}}
}

// unavailableDeployment is Deployment web, 0 of 2 available, with ReplicaSet
// web-1 (revision 1) and web-2 (revision 2) under it.
func unavailableDeployment(spec corev1.PodSpec) (appsv1.Deployment, []appsv1.ReplicaSet) {
	d := appsv1.Deployment{
		ObjectMeta: objMeta("web", "dep"),
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Selector: webSelector, Template: template(spec)},
		Status:     appsv1.DeploymentStatus{Replicas: 2, UpdatedReplicas: 2},
	}
	rs := func(name, uid, revision string) appsv1.ReplicaSet {
		m := objMeta(name, uid, owner("Deployment", "web", "dep"))
		m.Annotations = map[string]string{"deployment.kubernetes.io/revision": revision}
		return appsv1.ReplicaSet{ObjectMeta: m, Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](2), Selector: webSelector, Template: template(spec)}}
	}
	return d, []appsv1.ReplicaSet{rs("web-1", "rs1", "1"), rs("web-2", "rs2", "2")}
}

// pod is a Pod of ReplicaSet web-2 with the given status.
func pod(name string, spec corev1.PodSpec, status corev1.PodStatus) corev1.Pod {
	return corev1.Pod{ObjectMeta: objMeta(name, "pod-"+name, owner("ReplicaSet", "web-2", "rs2")), Spec: spec, Status: status}
}

func notReady(phase corev1.PodPhase, containers ...corev1.ContainerStatus) corev1.PodStatus {
	return corev1.PodStatus{
		Phase:             phase,
		Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}},
		ContainerStatuses: containers,
	}
}

func readyStatus() corev1.PodStatus {
	return corev1.PodStatus{
		Phase:             corev1.PodRunning,
		Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}},
	}
}

// chain flattens a cause into "Kind name: message" lines for comparison.
func chain(c syncv1.Cause) []string {
	var out []string
	for _, l := range c.Chain {
		out = append(out, l.Kind+" "+l.Name+": "+l.Message)
	}
	return out
}
