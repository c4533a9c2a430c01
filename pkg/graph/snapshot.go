// Package graph reads an Application's live objects within the bounds of the
// operations guide ("Diagnosis permissions") and builds the live resource
// graph from them: managed objects, owner references down to Pods, Service
// to EndpointSlice to Pod, Pod to ConfigMap, Secret, ServiceAccount and
// PersistentVolumeClaim to PersistentVolume, Ingress to Service and
// HorizontalPodAutoscaler to its target. The sync-controller diagnoses from
// the same Snapshot; ksync and the console draw the Graph.
package graph

import (
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/desiredstate"
)

// The bounds of the guide's "Diagnosis permissions".
const (
	// MaxSelectors is how many label selectors Pods and ReplicaSets are listed with.
	MaxSelectors = 20
	// MaxServiceSlices is how many Services' EndpointSlices are listed.
	MaxServiceSlices = 20
	// MaxPerList is the page size of every list; the rest is not read.
	MaxPerList = 100
	// MaxReferenced is how many referenced objects are read.
	MaxReferenced = 100
	// MaxObjects is how many objects are read in all.
	MaxObjects = 500
)

// Root is one object of an Application's inventory.
type Root struct {
	syncv1.ObjectRef
	// Hook is the stage (pre-sync, post-sync) of a hook object, else empty.
	Hook string
}

// ID identifies the root's object.
func (r Root) ID() desiredstate.ObjectID { return idOfRef(r.ObjectRef) }

// RootsOf lists the inventory of rev and its hooks, in inventory order.
// Entries that do not parse are left out: nothing can be read for them.
func RootsOf(rev *syncv1.Revision) []Root {
	hooks := map[desiredstate.ObjectID]string{}
	var roots []Root
	if h := rev.Status.Hooks; h != nil {
		for _, item := range h.Items {
			hooks[idOfRef(item.ObjectRef)] = item.Stage
		}
	}
	seen := map[desiredstate.ObjectID]bool{}
	if inv := rev.Status.Inventory; inv != nil {
		for _, e := range inv.Entries {
			ref, err := syncv1.ParseInventoryEntry(e)
			if err != nil {
				continue
			}
			root := Root{ObjectRef: ref}
			root.Hook = hooks[root.ID()]
			seen[root.ID()] = true
			roots = append(roots, root)
		}
	}
	if h := rev.Status.Hooks; h != nil {
		for _, item := range h.Items {
			if id := idOfRef(item.ObjectRef); !seen[id] && item.Version != "" {
				seen[id] = true
				roots = append(roots, Root{ObjectRef: item.ObjectRef, Hook: item.Stage})
			}
		}
	}
	return roots
}

// Found says what a read of one object gave.
type Found string

const (
	// Present: the object exists and was read.
	Present Found = "present"
	// Missing: the API server says it does not exist (or its kind is not served).
	Missing Found = "missing"
	// Denied: the account may not read it; nothing is known about it.
	Denied Found = "denied"
	// Skipped: a bound kept it from being read; nothing is known about it.
	Skipped Found = "skipped"
)

// Lookup is the result of reading one object. Object holds the whole object,
// or only its metadata for Secrets, ConfigMaps, ServiceAccounts and
// HorizontalPodAutoscaler targets.
type Lookup struct {
	Found  Found
	Object *unstructured.Unstructured
}

// Snapshot is everything one bounded pass read, as the reader's account.
type Snapshot struct {
	Namespace string
	Roots     []Root
	// Managed holds a Lookup for every root.
	Managed map[desiredstate.ObjectID]Lookup
	// ReplicaSets, Pods and EndpointSlices are what the lists returned,
	// sorted by name.
	ReplicaSets    []appsv1.ReplicaSet
	Pods           []corev1.Pod
	EndpointSlices []discoveryv1.EndpointSlice
	// Referenced holds a Lookup for every object a managed object, Pod or
	// claim refers to.
	Referenced map[desiredstate.ObjectID]Lookup
	// Listed says which list reads were made: "pods", "replicasets" and
	// "endpointslices" map to whether every list of that resource was allowed.
	Listed map[string]bool
	// ListedSelectors holds the selectors (labels.Selector.String()) whose
	// Pods were listed, ListedSlices the Services whose EndpointSlices were.
	ListedSelectors map[string]bool
	ListedSlices    map[string]bool
	// Denied names, sorted, the reads the account may not make, such as
	// "list pods" or "get persistentvolumes".
	Denied []string
	// Truncated says a bound left objects unread.
	Truncated bool
}

// Lookup returns what was read of id, as a managed or a referenced object.
func (s *Snapshot) Lookup(id desiredstate.ObjectID) (Lookup, bool) {
	if l, ok := s.Managed[id]; ok {
		return l, true
	}
	l, ok := s.Referenced[id]
	return l, ok
}

// Object converts what was read of id into out, a typed object; false when
// the object was not read whole.
func (s *Snapshot) Object(id desiredstate.ObjectID, out runtime.Object) bool {
	l, ok := s.Lookup(id)
	if !ok || l.Found != Present || l.Object == nil {
		return false
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(l.Object.Object, out) == nil
}

// DeniedRead says whether the account was refused the read named, such as
// "list pods".
func (s *Snapshot) DeniedRead(read string) bool {
	i := sort.SearchStrings(s.Denied, read)
	return i < len(s.Denied) && s.Denied[i] == read
}

// ID names an object of kind group/Kind in namespace.
func ID(group, kind, namespace, name string) desiredstate.ObjectID {
	return desiredstate.ObjectID{Group: group, Kind: kind, Namespace: namespace, Name: name}
}

func idOfRef(r syncv1.ObjectRef) desiredstate.ObjectID {
	return ID(r.Group, r.Kind, r.Namespace, r.Name)
}

// Ref turns an id back into a reference, with the version a kind is read at.
func Ref(id desiredstate.ObjectID, version string) syncv1.ObjectRef {
	return syncv1.ObjectRef{Group: id.Group, Version: version, Kind: id.Kind, Namespace: id.Namespace, Name: id.Name}
}

// Kinds the graph and the diagnosis know.
var (
	KindDeployment  = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	KindStatefulSet = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
	KindDaemonSet   = schema.GroupKind{Group: "apps", Kind: "DaemonSet"}
	KindReplicaSet  = schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}
	KindJob         = schema.GroupKind{Group: "batch", Kind: "Job"}
	KindCronJob     = schema.GroupKind{Group: "batch", Kind: "CronJob"}
	KindPod         = schema.GroupKind{Kind: "Pod"}
	KindService     = schema.GroupKind{Kind: "Service"}
	KindConfigMap   = schema.GroupKind{Kind: "ConfigMap"}
	KindSecret      = schema.GroupKind{Kind: "Secret"}
	KindAccount     = schema.GroupKind{Kind: "ServiceAccount"}
	KindPVC         = schema.GroupKind{Kind: "PersistentVolumeClaim"}
	KindPV          = schema.GroupKind{Kind: "PersistentVolume"}
	KindSlice       = schema.GroupKind{Group: "discovery.k8s.io", Kind: "EndpointSlice"}
	KindIngress     = schema.GroupKind{Group: "networking.k8s.io", Kind: "Ingress"}
	KindHPA         = schema.GroupKind{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}
)

// GroupKind of an id.
func GroupKind(id desiredstate.ObjectID) schema.GroupKind {
	return schema.GroupKind{Group: id.Group, Kind: id.Kind}
}
