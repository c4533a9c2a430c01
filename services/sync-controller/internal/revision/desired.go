package revision

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/desiredstate"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/hook"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/wave"
)

// objectID identifies an object in the cluster.
type objectID = desiredstate.ObjectID

func idOf(obj *unstructured.Unstructured) objectID { return desiredstate.IDOf(obj) }

func idOfRef(ref syncv1.ObjectRef) objectID {
	return objectID{Group: ref.Group, Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name}
}

// inventoryEntry is obj in the Inventory's compact form,
// "<namespace>_<name>_<group>_<kind>_<version>". None of the parts can hold
// an underscore, so the form splits back unambiguously.
func inventoryEntry(obj *unstructured.Unstructured) string {
	gvk := obj.GroupVersionKind()
	return strings.Join([]string{obj.GetNamespace(), obj.GetName(), gvk.Group, gvk.Kind, gvk.Version}, "_")
}

// parseInventoryEntry reverses inventoryEntry into an object carrying only
// its identity, ready for a Get or Delete.
func parseInventoryEntry(entry string) (*unstructured.Unstructured, error) {
	parts := strings.Split(entry, "_")
	if len(parts) != 5 || parts[1] == "" || parts[3] == "" || parts[4] == "" {
		return nil, fmt.Errorf("inventory entry %q is not <namespace>_<name>_<group>_<kind>_<version>", entry)
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(schema.GroupVersionKind{Group: parts[2], Version: parts[4], Kind: parts[3]})
	obj.SetNamespace(parts[0])
	obj.SetName(parts[1])
	return obj, nil
}

// desiredState is a Revision's rendered objects, checked and ordered.
type desiredState struct {
	// objects holds every rendered object, namespaces filled in, skipped ones included.
	objects []*unstructured.Unstructured
	groups  wave.Groups
	// ids are the identities of every object in objects.
	ids map[objectID]bool
	// stages of the hooks among objects.
	stages map[objectID]hook.Stage
	// newKinds are kinds that a CustomResourceDefinition in the desired
	// state defines and the API server does not serve yet.
	newKinds map[schema.GroupKind]bool
	// namespaces the desired state creates.
	namespaces map[string]bool
}

// hooks returns the hooks of stage in apply order.
func (ds *desiredState) hooks(stage hook.Stage) []*unstructured.Unstructured {
	if stage == hook.PreSync {
		return ds.groups.PreSync
	}
	return ds.groups.PostSync
}

// waveObjects returns every object of every wave, in apply order.
func (ds *desiredState) waveObjects() []*unstructured.Unstructured {
	var objs []*unstructured.Unstructured
	for _, g := range ds.groups.Waves {
		objs = append(objs, g.Objects...)
	}
	return objs
}

// loadDesired reads, verifies and orders the rendered objects of ro's
// Revision. The desired-state Secret is read without a cache, so memory does
// not grow with the number of Revisions kept. Problems with the content are
// *failure values with reason ValidationFailure; other errors are transient.
func (r *Reconciler) loadDesired(ctx context.Context, ro *rollout) (*desiredState, error) {
	if ro.desired != nil {
		return ro.desired, nil
	}
	rev := ro.rev
	ref := rev.Spec.DesiredState
	secret := &corev1.Secret{}
	key := types.NamespacedName{Namespace: rev.Namespace, Name: ref.SecretName}
	if err := r.APIReader.Get(ctx, key, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("Revision %s: desired-state Secret %s (spec.desiredState.secretName): %w", rev.Name, key, errDesiredStateMissing)
		}
		return nil, fmt.Errorf("reading desired-state Secret %s: %w", key, err)
	}
	invalid := func(format string, args ...any) error {
		return &failure{reason: syncv1.ReasonValidationFailure,
			message: fmt.Sprintf("Revision %s: ", rev.Name) + fmt.Sprintf(format, args...)}
	}
	if secret.Type != syncv1.DesiredStateSecretType {
		return nil, invalid("Secret %s has type %q, want %q", key, secret.Type, syncv1.DesiredStateSecretType)
	}
	objs, err := desiredstate.Decode(secret.Data[desiredstate.DataKey])
	if err != nil {
		return nil, invalid("Secret %s key %s: %v", key, desiredstate.DataKey, err)
	}
	// The Revision pins the content; a Secret changed since is not applied.
	if _, digest, err := desiredstate.Encode(objs); err != nil {
		return nil, invalid("Secret %s: %v", key, err)
	} else if digest != ref.Digest {
		return nil, invalid("Secret %s holds desired state %s, but spec.desiredState.digest pins %s", key, digest, ref.Digest)
	}

	ds := &desiredState{
		objects:    objs,
		ids:        make(map[objectID]bool, len(objs)),
		stages:     make(map[objectID]hook.Stage),
		newKinds:   make(map[schema.GroupKind]bool),
		namespaces: make(map[string]bool),
	}
	crdScopes := definedKinds(objs)
	var problems []string
	for i, obj := range objs {
		if problem := r.place(obj, ro.destinationNamespace(), crdScopes, ds); problem != "" {
			problems = append(problems, fmt.Sprintf("object %d (%s %q): %s", i, obj.GetKind(), obj.GetName(), problem))
		}
	}
	if len(problems) > 0 {
		return nil, invalid("%d invalid object(s): %s", len(problems), strings.Join(problems, "; "))
	}
	for _, obj := range objs {
		ro.claim(obj)
	}
	if ds.groups, err = wave.Plan(objs); err != nil {
		return nil, invalid("%v", err)
	}
	for _, stage := range []hook.Stage{hook.PreSync, hook.PostSync} {
		for _, obj := range ds.hooks(stage) {
			ds.stages[idOf(obj)] = stage
		}
	}
	if n := len(ds.groups.PreSync) + len(ds.groups.PostSync); n > syncv1.MaxHookEntries {
		return nil, invalid("%d hooks; a rollout tracks at most %d", n, syncv1.MaxHookEntries)
	}
	if n := len(ds.groups.Waves); n > maxWaves {
		return nil, invalid("%d sync waves; a rollout tracks at most %d", n, maxWaves)
	}
	ro.desired = ds
	return ds, nil
}

// owner is the value of the owned-by annotation on what ro applies.
func (ro *rollout) owner() string {
	return ro.app.Namespace + "/" + ro.app.Name
}

// claim marks obj as the Application's, so that plan, drift and prune can
// tell its objects from another Application's.
func (ro *rollout) claim(obj *unstructured.Unstructured) {
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[syncv1.OwnedByAnnotation] = ro.owner()
	obj.SetAnnotations(annotations)
}

// ownedByAnother returns the Application other than ro's that live is
// annotated as belonging to, or "".
func (ro *rollout) ownedByAnother(live *unstructured.Unstructured) string {
	if live == nil {
		return ""
	}
	if owner := live.GetAnnotations()[syncv1.OwnedByAnnotation]; owner != "" && owner != ro.owner() {
		return owner
	}
	return ""
}

// maxWaves is the bound of Revision.status.waves.
const maxWaves = 100

// place checks obj's identity and gives it a namespace when its kind is
// namespaced and it names none (cluster-scoped objects lose theirs, as with
// kubectl). It returns what is wrong with obj, or "".
func (r *Reconciler) place(obj *unstructured.Unstructured, namespace string, crdScopes map[schema.GroupKind]bool, ds *desiredState) string {
	gvk := obj.GroupVersionKind()
	switch {
	case obj.GetAPIVersion() == "" || gvk.Version == "":
		return "apiVersion is required"
	case gvk.Kind == "":
		return "kind is required"
	case obj.GetName() == "":
		return "metadata.name is required"
	}
	namespaced, known, err := r.scopeOf(gvk)
	if err != nil {
		return err.Error()
	}
	if !known {
		scope, defined := crdScopes[gvk.GroupKind()]
		if !defined {
			return fmt.Sprintf("kind %s is not served by the API server and no CustomResourceDefinition in the desired state defines it", gvk.GroupKind())
		}
		namespaced = scope
		ds.newKinds[gvk.GroupKind()] = true
	}
	switch {
	case namespaced && obj.GetNamespace() == "":
		obj.SetNamespace(namespace)
	case !namespaced:
		obj.SetNamespace("")
	}
	if gvk.GroupKind() == (schema.GroupKind{Kind: "Namespace"}) {
		ds.namespaces[obj.GetName()] = true
	}
	ds.ids[idOf(obj)] = true
	return ""
}

// scopeOf asks the RESTMapper whether gvk is namespaced; known is false
// when the API server does not serve the kind.
func (r *Reconciler) scopeOf(gvk schema.GroupVersionKind) (namespaced, known bool, err error) {
	mapping, err := r.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		if meta.IsNoMatchError(err) {
			return false, false, nil
		}
		return false, false, fmt.Errorf("looking up kind %s: %w", gvk, err)
	}
	return mapping.Scope.Name() == meta.RESTScopeNameNamespace, true, nil
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

// errDesiredStateMissing is returned while a Revision's desired-state
// Secret does not exist, as between the source-controller creating the
// Revision and the Secret it owns.
var errDesiredStateMissing = errors.New("not found")

// errKindNotServed is returned while a kind the desired state defines is
// not yet served, so the caller waits for its CustomResourceDefinition.
var errKindNotServed = errors.New("kind not served yet")
