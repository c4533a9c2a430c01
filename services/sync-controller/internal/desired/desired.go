// Package desired checks and orders the decoded desired state of a
// Revision before anything is planned or applied: every object gets its
// namespace and its owner, hooks and waves are ordered, and the rollout stays
// within the bounds its status can track. It reads no cluster; what the API
// server serves comes in as a Scope.
package desired

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/desiredstate"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/hook"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/validation"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/wave"
)

// MaxWaves is the bound of Revision.status.waves.
const MaxWaves = 100

// Scope reports whether the API server serves gvk's kind (known) and
// whether it is namespaced.
type Scope func(gvk schema.GroupVersionKind) (namespaced, known bool, err error)

// State is a Revision's rendered objects, checked and ordered.
type State struct {
	// Objects holds every rendered object, namespaces filled in, skipped ones included.
	Objects []*unstructured.Unstructured
	Groups  wave.Groups
	// IDs are the identities of every object in Objects.
	IDs map[desiredstate.ObjectID]bool
	// Stages of the hooks among Objects.
	Stages map[desiredstate.ObjectID]hook.Stage
	// NewKinds are kinds that a CustomResourceDefinition in the desired
	// state defines and the API server does not serve yet.
	NewKinds map[schema.GroupKind]bool
	// Namespaces the desired state creates.
	Namespaces map[string]bool
}

// Prepare places every object of objs (a namespace for namespaced kinds
// that name none, none for cluster-scoped ones, as kubectl does), marks it
// as owner's with the owned-by annotation, and orders the objects into
// hooks and waves. The objects are changed in place. Every error is a
// problem with the content, its message ready to follow "Revision <name>: ".
func Prepare(objs []*unstructured.Unstructured, namespace, owner string, scope Scope) (*State, error) {
	ds := &State{
		Objects:    objs,
		IDs:        make(map[desiredstate.ObjectID]bool, len(objs)),
		Stages:     make(map[desiredstate.ObjectID]hook.Stage),
		NewKinds:   make(map[schema.GroupKind]bool),
		Namespaces: make(map[string]bool),
	}
	crdScopes := definedKinds(objs)
	var problems []string
	for i, obj := range objs {
		if problem := ds.place(obj, namespace, scope, crdScopes); problem != "" {
			problems = append(problems, fmt.Sprintf("object %d (%s %q): %s", i, obj.GetKind(), obj.GetName(), problem))
		} else if problem := bytesProblem(obj); problem != "" {
			problems = append(problems, validation.Describe(obj)+": "+problem)
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%d invalid object(s): %s", len(problems), strings.Join(problems, "; "))
	}
	for _, obj := range objs {
		claim(obj, owner)
	}
	groups, err := wave.Order(objs)
	if err != nil {
		return nil, err
	}
	ds.Groups = groups
	for _, stage := range []hook.Stage{hook.PreSync, hook.PostSync} {
		for _, obj := range ds.Hooks(stage) {
			ds.Stages[desiredstate.IDOf(obj)] = stage
		}
	}
	if n := len(ds.Groups.PreSync) + len(ds.Groups.PostSync); n > syncv1.MaxHookEntries {
		return nil, fmt.Errorf("%d hooks; a rollout tracks at most %d", n, syncv1.MaxHookEntries)
	}
	if n := len(ds.Groups.Waves); n > MaxWaves {
		return nil, fmt.Errorf("%d sync waves; a rollout tracks at most %d", n, MaxWaves)
	}
	return ds, nil
}

// Hooks returns the hooks of stage in apply order.
func (ds *State) Hooks(stage hook.Stage) []*unstructured.Unstructured {
	if stage == hook.PreSync {
		return ds.Groups.PreSync
	}
	return ds.Groups.PostSync
}

// WaveObjects returns every object of every wave, in apply order.
func (ds *State) WaveObjects() []*unstructured.Unstructured {
	var objs []*unstructured.Unstructured
	for _, g := range ds.Groups.Waves {
		objs = append(objs, g.Objects...)
	}
	return objs
}

// place checks obj's identity and gives it its namespace. It returns what
// is wrong with obj, or "".
func (ds *State) place(obj *unstructured.Unstructured, namespace string, scope Scope, crdScopes map[schema.GroupKind]bool) string {
	gvk := obj.GroupVersionKind()
	switch {
	case obj.GetAPIVersion() == "" || gvk.Version == "":
		return "apiVersion is required"
	case gvk.Kind == "":
		return "kind is required"
	case obj.GetName() == "":
		return "metadata.name is required"
	}
	namespaced, known, err := scope(gvk)
	if err != nil {
		return err.Error()
	}
	if !known {
		crdScope, defined := crdScopes[gvk.GroupKind()]
		if !defined {
			return fmt.Sprintf("kind %s is not served by the API server and no CustomResourceDefinition in the desired state defines it", gvk.GroupKind())
		}
		namespaced = crdScope
		ds.NewKinds[gvk.GroupKind()] = true
	}
	switch {
	case namespaced && obj.GetNamespace() == "":
		obj.SetNamespace(namespace)
	case !namespaced:
		obj.SetNamespace("")
	}
	if gvk.GroupKind() == (schema.GroupKind{Kind: "Namespace"}) {
		ds.Namespaces[obj.GetName()] = true
	}
	ds.IDs[desiredstate.IDOf(obj)] = true
	return ""
}

// claim marks obj as owner's, so that plan, drift and prune can tell its
// objects from another Application's.
func claim(obj *unstructured.Unstructured, owner string) {
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[syncv1.OwnedByAnnotation] = owner
	obj.SetAnnotations(annotations)
}

// definedKinds maps every kind a CustomResourceDefinition among objs
// defines to whether it is namespaced.
func definedKinds(objs []*unstructured.Unstructured) map[schema.GroupKind]bool {
	kinds := make(map[schema.GroupKind]bool)
	for _, obj := range objs {
		if obj.GroupVersionKind().GroupKind() != (schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}) {
			continue
		}
		group, _, _ := unstructured.NestedString(obj.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(obj.Object, "spec", "names", "kind")
		scope, _, _ := unstructured.NestedString(obj.Object, "spec", "scope")
		if group != "" && kind != "" {
			kinds[schema.GroupKind{Group: group, Kind: kind}] = scope != "Cluster"
		}
	}
	return kinds
}
