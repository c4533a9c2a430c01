// Package wave orders rendered objects into the groups of a rollout:
// pre-sync hooks, sync waves in ascending order, and post-sync hooks, each
// ordered by kind so that what an object needs is applied before it.
package wave

import (
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/desiredstate"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/hook"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/validation"
)

// Wave returns the sync wave of obj: sync.kuvryn.io/sync-wave if set, else
// argocd.argoproj.io/sync-wave, else, on a Helm hook, helm.sh/hook-weight
// (Helm runs the hooks of a stage in ascending weight), else 0. Only the
// annotation that wins is read. Surrounding spaces are ignored; anything
// but a base-10 int32 is a *validation.Error, except in a hook weight.
func Wave(obj *unstructured.Unstructured) (int32, error) {
	annotations := obj.GetAnnotations()
	keys := []string{syncv1.SyncWaveAnnotation, syncv1.ArgoSyncWaveAnnotation}
	if _, helmHook := annotations[syncv1.HelmHookAnnotation]; helmHook {
		keys = append(keys, syncv1.HelmHookWeightAnnotation)
	}
	for _, key := range keys {
		value, ok := annotations[key]
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 32)
		if err != nil && key == syncv1.HelmHookWeightAnnotation {
			// Helm runs a hook whose weight does not parse at weight 0.
			return 0, nil
		}
		if err != nil {
			problem := "not an integer"
			if numErr, ok := err.(*strconv.NumError); ok && numErr.Err == strconv.ErrRange {
				problem = "out of the int32 range"
			}
			return 0, &validation.Error{Object: validation.Describe(obj), Annotation: key, Value: value, Problem: problem}
		}
		return int32(n), nil
	}
	return 0, nil
}

// kindOrder is the apply order inside a group, after Argo CD's
// gitops-engine, except that CRDs come right after Namespaces so that no
// custom resource, whatever its kind is called, precedes its definition.
// Kinds match by API group as well, so a custom resource named like a built-in
// kind (a Knative Service, say) is not mistaken for it. A row lists the
// groups a kind has been served from.
var kindOrder = []struct {
	kind   string
	groups []string
}{
	{"Namespace", []string{""}},
	{"CustomResourceDefinition", []string{"apiextensions.k8s.io"}},
	{"NetworkPolicy", []string{"networking.k8s.io", "extensions"}},
	{"ResourceQuota", []string{""}},
	{"LimitRange", []string{""}},
	{"PodSecurityPolicy", []string{"policy", "extensions"}},
	{"PodDisruptionBudget", []string{"policy"}},
	{"ServiceAccount", []string{""}},
	{"Secret", []string{""}},
	{"SecretList", []string{""}},
	{"ConfigMap", []string{""}},
	{"StorageClass", []string{"storage.k8s.io"}},
	{"PersistentVolume", []string{""}},
	{"PersistentVolumeClaim", []string{""}},
	{"ClusterRole", []string{"rbac.authorization.k8s.io"}},
	{"ClusterRoleList", []string{"rbac.authorization.k8s.io"}},
	{"ClusterRoleBinding", []string{"rbac.authorization.k8s.io"}},
	{"ClusterRoleBindingList", []string{"rbac.authorization.k8s.io"}},
	{"Role", []string{"rbac.authorization.k8s.io"}},
	{"RoleList", []string{"rbac.authorization.k8s.io"}},
	{"RoleBinding", []string{"rbac.authorization.k8s.io"}},
	{"RoleBindingList", []string{"rbac.authorization.k8s.io"}},
	{"Service", []string{""}},
	{"DaemonSet", []string{"apps", "extensions"}},
	{"Pod", []string{""}},
	{"ReplicationController", []string{""}},
	{"ReplicaSet", []string{"apps", "extensions"}},
	{"Deployment", []string{"apps", "extensions"}},
	{"HorizontalPodAutoscaler", []string{"autoscaling"}},
	{"StatefulSet", []string{"apps"}},
	{"Job", []string{"batch"}},
	{"CronJob", []string{"batch"}},
	{"IngressClass", []string{"networking.k8s.io"}},
	{"Ingress", []string{"networking.k8s.io", "extensions"}},
	{"APIService", []string{"apiregistration.k8s.io"}},
}

var kindRank = func() map[schema.GroupKind]int {
	rank := make(map[schema.GroupKind]int)
	for i, row := range kindOrder {
		for _, group := range row.groups {
			rank[schema.GroupKind{Group: group, Kind: row.kind}] = i
		}
	}
	return rank
}()

// KindOrder is the position of gvk's kind in the apply order: lower applies
// first. Kinds not in the list, custom resources among them, share the last
// position. The version does not matter.
func KindOrder(gvk schema.GroupVersionKind) int {
	if rank, ok := kindRank[gvk.GroupKind()]; ok {
		return rank
	}
	return len(kindOrder)
}

// Group is one sync wave: its objects in apply order.
type Group struct {
	Wave    int32
	Objects []*unstructured.Unstructured
}

// Groups is a rollout in order: PreSync, then Waves (ascending), then
// PostSync. Pruning, between the last wave and PostSync, is not planned here.
type Groups struct {
	// PreSync hooks, ordered by wave, kind order, then identity.
	PreSync []*unstructured.Unstructured
	// Waves holds one Group per distinct wave of ordinary objects, ascending;
	// a wave without objects has no Group.
	Waves []Group
	// PostSync hooks, ordered like PreSync.
	PostSync []*unstructured.Unstructured
}

// Order classifies every object with hook.Classify, drops skipped ones and
// orders the rest into Groups. Inside a group objects are ordered by kind
// order, then kind, group, namespace, name and version, so the result does
// not depend on the order of objs. The objects are not copied.
//
// Order checks every object before returning: the error, an *OrderError, lists
// every invalid hook or wave annotation and every object that appears more
// than once (same group, kind, namespace and name), since a duplicate would
// make the outcome depend on input order.
func Order(objs []*unstructured.Unstructured) (Groups, error) {
	type planned struct {
		obj   *unstructured.Unstructured
		stage hook.Stage
		wave  int32
	}
	var (
		items []planned
		errs  []error
	)
	seen := make(map[desiredstate.ObjectID]int)
	for _, obj := range objs {
		id := desiredstate.IDOf(obj)
		seen[id]++
		if seen[id] == 2 {
			errs = append(errs, &validation.Error{Object: validation.Describe(obj), Problem: "appears more than once in the desired state"})
		}
		stage, err := hook.Classify(obj)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if stage == hook.Skip {
			continue
		}
		w, err := Wave(obj)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		items = append(items, planned{obj: obj, stage: stage, wave: w})
	}
	if len(errs) > 0 {
		return Groups{}, &OrderError{Errs: errs}
	}

	sort.Slice(items, func(i, j int) bool {
		if items[i].wave != items[j].wave {
			return items[i].wave < items[j].wave
		}
		return less(items[i].obj, items[j].obj)
	})
	var groups Groups
	for _, it := range items {
		switch it.stage {
		case hook.PreSync:
			groups.PreSync = append(groups.PreSync, it.obj)
		case hook.PostSync:
			groups.PostSync = append(groups.PostSync, it.obj)
		default:
			if n := len(groups.Waves); n == 0 || groups.Waves[n-1].Wave != it.wave {
				groups.Waves = append(groups.Waves, Group{Wave: it.wave})
			}
			last := &groups.Waves[len(groups.Waves)-1]
			last.Objects = append(last.Objects, it.obj)
		}
	}
	return groups, nil
}

// less orders objects of one wave: kind order first, then a total order on
// identity so that ties never depend on input order.
func less(a, b *unstructured.Unstructured) bool {
	ga, gb := a.GroupVersionKind(), b.GroupVersionKind()
	if oa, ob := KindOrder(ga), KindOrder(gb); oa != ob {
		return oa < ob
	}
	for _, pair := range [][2]string{
		{ga.Kind, gb.Kind},
		{ga.Group, gb.Group},
		{a.GetNamespace(), b.GetNamespace()},
		{a.GetName(), b.GetName()},
		{ga.Version, gb.Version},
	} {
		if pair[0] != pair[1] {
			return pair[0] < pair[1]
		}
	}
	return false
}
