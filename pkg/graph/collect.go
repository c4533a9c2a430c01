package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kuvryn/kuvryn-sync/pkg/desiredstate"
)

// Reader reads as one account; a controller-runtime client is one.
type Reader interface {
	client.Reader
	RESTMapper() meta.RESTMapper
}

// metadataOnly are the kinds whose data must never leave the API server:
// they are read through the metadata API.
var metadataOnly = map[schema.GroupKind]bool{KindSecret: true, KindConfigMap: true, KindAccount: true}

// backoff retries transient API errors: a few quick attempts, since a pass
// runs again on the next re-check anyway.
var backoff = wait.Backoff{Steps: 4, Duration: 100 * time.Millisecond, Factor: 2, Jitter: 0.1}

// Collect reads, as r's account, the live objects of roots in namespace and
// what they lead to, within the guide's bounds. A read the account may not
// make is recorded in the Snapshot, not returned; the error is for reads
// that kept failing otherwise.
func Collect(ctx context.Context, r Reader, namespace string, roots []Root) (*Snapshot, error) {
	c := &collector{r: r, snap: &Snapshot{
		Namespace:  namespace,
		Roots:      slices.Clone(roots),
		Managed:    map[desiredstate.ObjectID]Lookup{},
		Referenced: map[desiredstate.ObjectID]Lookup{},
		Listed:     map[string]bool{},

		ListedSelectors: map[string]bool{},
		ListedSlices:    map[string]bool{},
	}, objects: MaxObjects, referenced: MaxReferenced, denied: map[string]bool{}}
	for _, step := range []func(context.Context) error{c.managed, c.lists, c.slices, c.references} {
		if err := step(ctx); err != nil {
			return nil, err
		}
	}
	for read := range c.denied {
		c.snap.Denied = append(c.snap.Denied, read)
	}
	sort.Strings(c.snap.Denied)
	return c.snap, nil
}

type collector struct {
	r    Reader
	snap *Snapshot
	// objects and referenced are what is left of the bounds.
	objects, referenced int
	denied              map[string]bool
}

// get reads one object into a Lookup: whole, or only its metadata when
// metadata is set or the kind is one whose data must stay in the API server.
func (c *collector) get(ctx context.Context, id desiredstate.ObjectID, version string, metadata bool) (Lookup, error) {
	if c.objects <= 0 {
		c.snap.Truncated = true
		return Lookup{Found: Skipped}, nil
	}
	gvk := schema.GroupVersionKind{Group: id.Group, Version: version, Kind: id.Kind}
	key := client.ObjectKey{Namespace: id.Namespace, Name: id.Name}
	var obj client.Object
	if !metadata && !metadataOnly[gvk.GroupKind()] {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		obj = u
	} else {
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(gvk)
		obj = m
	}
	c.objects--
	err := c.retry(ctx, func() error { return c.r.Get(ctx, key, obj) })
	switch {
	case err == nil:
		return Lookup{Found: Present, Object: asUnstructured(obj, gvk)}, nil
	case apierrors.IsNotFound(err), meta.IsNoMatchError(err):
		return Lookup{Found: Missing}, nil
	case apierrors.IsForbidden(err):
		c.denied["get "+c.resource(gvk)] = true
		return Lookup{Found: Denied}, nil
	}
	return Lookup{}, fmt.Errorf("reading %s: %w", id, err)
}

func asUnstructured(obj client.Object, gvk schema.GroupVersionKind) *unstructured.Unstructured {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		m = map[string]any{}
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	return u
}

// retry retries fn while it fails with an error that may pass.
func (c *collector) retry(ctx context.Context, fn func() error) error {
	return retry.OnError(backoff, func(err error) bool { return ctx.Err() == nil && transient(err) }, fn)
}

func transient(err error) bool {
	switch {
	case apierrors.IsNotFound(err), apierrors.IsForbidden(err), apierrors.IsUnauthorized(err),
		apierrors.IsBadRequest(err), apierrors.IsInvalid(err), apierrors.IsMethodNotSupported(err),
		meta.IsNoMatchError(err), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false
	}
	return true
}

// resource names gvk's resource for a denied read, such as "secrets".
func (c *collector) resource(gvk schema.GroupVersionKind) string {
	if m, err := c.r.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
		if m.Resource.Group == "" {
			return m.Resource.Resource
		}
		return m.Resource.Resource + "." + m.Resource.Group
	}
	return strings.ToLower(gvk.Kind) + "s"
}

// managed reads every root.
func (c *collector) managed(ctx context.Context) error {
	for _, root := range c.snap.Roots {
		id := root.ID()
		if _, done := c.snap.Managed[id]; done {
			continue
		}
		l, err := c.get(ctx, id, root.Version, false)
		if err != nil {
			return err
		}
		c.snap.Managed[id] = l
	}
	return nil
}

// present lists the managed objects that were read, in root order.
func (c *collector) present() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	seen := map[desiredstate.ObjectID]bool{}
	for _, root := range c.snap.Roots {
		id := root.ID()
		if l := c.snap.Managed[id]; l.Found == Present && !seen[id] {
			seen[id] = true
			out = append(out, l.Object)
		}
	}
	return out
}

// lists lists ReplicaSets (for Deployments) and Pods with the selector of
// each managed workload and Service, at most MaxSelectors distinct ones.
func (c *collector) lists(ctx context.Context) error {
	type selector struct {
		sel         labels.Selector
		replicaSets bool
	}
	var sels []*selector
	byString := map[string]*selector{}
	for _, obj := range c.present() {
		sel, ok := PodSelector(obj)
		if !ok {
			continue
		}
		s := byString[sel.String()]
		if s == nil {
			s = &selector{sel: sel}
			byString[sel.String()] = s
			sels = append(sels, s)
		}
		s.replicaSets = s.replicaSets || obj.GroupVersionKind().GroupKind() == KindDeployment
	}
	if len(sels) > MaxSelectors {
		sels, c.snap.Truncated = sels[:MaxSelectors], true
	}
	pods := map[string]corev1.Pod{}
	replicaSets := map[string]appsv1.ReplicaSet{}
	for _, s := range sels {
		if s.replicaSets {
			_, err := c.list(ctx, schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSetList"}, "replicasets", s.sel, func(u *unstructured.Unstructured) {
				var rs appsv1.ReplicaSet
				if convert(u, &rs) {
					replicaSets[rs.Name] = rs
				}
			})
			if err != nil {
				return err
			}
		}
		listed, err := c.list(ctx, schema.GroupVersionKind{Version: "v1", Kind: "PodList"}, "pods", s.sel, func(u *unstructured.Unstructured) {
			var p corev1.Pod
			if convert(u, &p) {
				pods[p.Name] = p
			}
		})
		if err != nil {
			return err
		}
		c.snap.ListedSelectors[s.sel.String()] = listed
	}
	c.snap.ReplicaSets = sortedValues(replicaSets, func(rs appsv1.ReplicaSet) string { return rs.Name })
	c.snap.Pods = sortedValues(pods, func(p corev1.Pod) string { return p.Name })
	return nil
}

// slices lists the EndpointSlices of at most MaxServiceSlices managed Services.
func (c *collector) slices(ctx context.Context) error {
	var services []string
	for _, obj := range c.present() {
		if _, ok := PodSelector(obj); ok && obj.GroupVersionKind().GroupKind() == KindService {
			services = append(services, obj.GetName())
		}
	}
	if len(services) > MaxServiceSlices {
		services, c.snap.Truncated = services[:MaxServiceSlices], true
	}
	found := map[string]discoveryv1.EndpointSlice{}
	for _, name := range services {
		sel := labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: name})
		listed, err := c.list(ctx, schema.GroupVersionKind{Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSliceList"}, "endpointslices", sel, func(u *unstructured.Unstructured) {
			var s discoveryv1.EndpointSlice
			if convert(u, &s) {
				found[s.Name] = s
			}
		})
		if err != nil {
			return err
		}
		c.snap.ListedSlices[name] = listed
	}
	c.snap.EndpointSlices = sortedValues(found, func(s discoveryv1.EndpointSlice) string { return s.Name })
	return nil
}

// list makes one bounded list of resource with sel, hands each item to add
// and says whether the list was made. Once a list of resource is refused,
// the others are not tried: RBAC does not grant list by label.
func (c *collector) list(ctx context.Context, gvk schema.GroupVersionKind, resource string, sel labels.Selector, add func(*unstructured.Unstructured)) (bool, error) {
	if allowed, tried := c.snap.Listed[resource]; tried && !allowed {
		return false, nil
	}
	limit := min(MaxPerList, c.objects)
	if limit <= 0 {
		c.snap.Truncated = true
		return false, nil
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk)
	err := c.retry(ctx, func() error {
		return c.r.List(ctx, list, client.InNamespace(c.snap.Namespace), client.MatchingLabelsSelector{Selector: sel}, client.Limit(int64(limit)))
	})
	switch {
	case apierrors.IsForbidden(err):
		c.snap.Listed[resource] = false
		c.denied["list "+resource] = true
		return false, nil
	case err != nil:
		return false, fmt.Errorf("listing %s with selector %s in namespace %s: %w", resource, sel, c.snap.Namespace, err)
	}
	c.snap.Listed[resource] = true
	items := list.Items
	if len(items) > limit {
		items = items[:limit]
	}
	if list.GetContinue() != "" || len(list.Items) > limit {
		c.snap.Truncated = true
	}
	c.objects -= len(items)
	for i := range items {
		add(&items[i])
	}
	return true, nil
}

func sortedValues[T any](m map[string]T, name func(T) string) []T {
	out := make([]T, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return name(out[i]) < name(out[j]) })
	return out
}

// wanted is one referenced object to read, and the version to read it at.
type wanted struct {
	id      desiredstate.ObjectID
	version string
	// metadata reads only the metadata: a scale target can be any kind,
	// and only whether it exists matters.
	metadata bool
}

// references reads the objects the managed objects and Pods refer to, at
// most MaxReferenced, then the PersistentVolumes of the claims read.
func (c *collector) references(ctx context.Context) error {
	var want []wanted
	for _, obj := range c.present() {
		if t, ok := PodTemplate(obj); ok {
			for _, r := range PodReferences(obj.GetNamespace(), &t.Spec) {
				want = append(want, wanted{id: r.ID, version: "v1"})
			}
		}
		switch obj.GroupVersionKind().GroupKind() {
		case KindIngress:
			for _, id := range IngressServices(obj) {
				want = append(want, wanted{id: id, version: "v1"})
			}
		case KindHPA:
			if id, version, ok := ScaleTarget(obj); ok {
				want = append(want, wanted{id: id, version: version, metadata: true})
			}
		}
	}
	for i := range c.snap.Pods {
		p := &c.snap.Pods[i]
		for _, r := range PodReferences(p.Namespace, &p.Spec) {
			want = append(want, wanted{id: r.ID, version: "v1"})
		}
	}
	if err := c.read(ctx, want); err != nil {
		return err
	}
	// Claims, managed or referenced, lead to their volumes.
	var volumes []wanted
	for _, id := range append(sortedIDs(c.snap.Managed), sortedIDs(c.snap.Referenced)...) {
		var pvc corev1.PersistentVolumeClaim
		if GroupKind(id) == KindPVC && c.snap.Object(id, &pvc) && pvc.Spec.VolumeName != "" {
			volumes = append(volumes, wanted{id: ID("", KindPV.Kind, "", pvc.Spec.VolumeName), version: "v1"})
		}
	}
	return c.read(ctx, volumes)
}

// read reads each wanted object once, unless managed (already read), within
// what is left of MaxReferenced; the rest are Skipped.
func (c *collector) read(ctx context.Context, want []wanted) error {
	for _, w := range want {
		if _, done := c.snap.Lookup(w.id); done {
			continue
		}
		if c.referenced <= 0 {
			c.snap.Referenced[w.id] = Lookup{Found: Skipped}
			c.snap.Truncated = true
			continue
		}
		c.referenced--
		l, err := c.get(ctx, w.id, w.version, w.metadata)
		if err != nil {
			return err
		}
		c.snap.Referenced[w.id] = l
	}
	return nil
}

func sortedIDs(m map[desiredstate.ObjectID]Lookup) []desiredstate.ObjectID {
	ids := make([]desiredstate.ObjectID, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return lessID(ids[i], ids[j]) })
	return ids
}
