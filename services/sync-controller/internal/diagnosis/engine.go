// Package diagnosis explains an unhealthy Application as causal chains: from
// each managed object that is not as it should be, down through the objects
// it owns or refers to, to the root cause, each link naming the object and
// the evidence (a field, a reason, an exit code). The engine (Diagnose) is
// pure: objects in, causes out; Run reads the objects first, as the
// Application's service account and within the guide's bounds.
package diagnosis

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/desiredstate"
	"github.com/kuvryn/kuvryn-sync/pkg/graph"
	"github.com/kuvryn/kuvryn-sync/pkg/message"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/health"
)

// Bounds of status.diagnosis, as the CRD validates them.
const (
	MaxCauses      = 20
	MaxChain       = 10
	maxLinkMessage = 512
	maxSummary     = 1024
)

// Diagnose returns the causal chains of what s shows is wrong, in inventory
// order. The same Snapshot always gives the same Diagnosis: nothing in it
// depends on time or on map order, and counts that grow while the state
// stays the same (restarts) are left out.
func Diagnose(s *graph.Snapshot) syncv1.Diagnosis {
	e := &engine{s: s, byUID: map[types.UID]*unstructured.Unstructured{}}
	for _, l := range s.Managed {
		if l.Object != nil && l.Object.GetUID() != "" {
			e.byUID[l.Object.GetUID()] = l.Object
		}
	}
	var d syncv1.Diagnosis
	seen := map[desiredstate.ObjectID]bool{}
	for _, root := range s.Roots {
		if seen[root.ID()] {
			continue
		}
		seen[root.ID()] = true
		chain := e.root(root)
		if len(chain) == 0 {
			continue
		}
		if len(d.Causes) == MaxCauses {
			d.Truncated = true
			break
		}
		if len(chain) > MaxChain {
			chain, d.Truncated = append(chain[:MaxChain-1], chain[len(chain)-1]), true
		}
		for i := range chain {
			chain[i].Message = message.Bound(chain[i].Message, maxLinkMessage)
		}
		d.Causes = append(d.Causes, syncv1.Cause{Chain: chain})
	}
	if len(d.Causes) > 0 {
		d.Truncated = d.Truncated || s.Truncated
		d.Summary = message.Bound(summary(d.Causes), maxSummary)
	}
	return d
}

func summary(causes []syncv1.Cause) string {
	n := "1 cause"
	if len(causes) > 1 {
		n = strconv.Itoa(len(causes)) + " causes"
	}
	return n + "; first: " + RootCause(causes[0])
}

// RootCause names the last link of a chain: "ConfigMap shop/settings: not found ...".
func RootCause(c syncv1.Cause) string {
	if len(c.Chain) == 0 {
		return ""
	}
	l := c.Chain[len(c.Chain)-1]
	return idOf(l.ObjectRef).String() + ": " + l.Message
}

func idOf(r syncv1.ObjectRef) desiredstate.ObjectID {
	return graph.ID(r.Group, r.Kind, r.Namespace, r.Name)
}

type engine struct {
	s     *graph.Snapshot
	byUID map[types.UID]*unstructured.Unstructured
}

func link(id desiredstate.ObjectID, version, format string, args ...any) syncv1.CauseLink {
	return syncv1.CauseLink{ObjectRef: graph.Ref(id, version), Message: fmt.Sprintf(format, args...)}
}

func linkOf(obj *unstructured.Unstructured, format string, args ...any) syncv1.CauseLink {
	return link(desiredstate.IDOf(obj), obj.GroupVersionKind().Version, format, args...)
}

// root diagnoses one managed object; nil when nothing is wrong with it, or
// nothing is known.
func (e *engine) root(root graph.Root) []syncv1.CauseLink {
	l := e.s.Managed[root.ID()]
	switch l.Found {
	case graph.Missing:
		return []syncv1.CauseLink{link(root.ID(), root.Version, "not found: the rollout applied it, but it no longer exists")}
	case graph.Present:
	default:
		return nil
	}
	obj := l.Object
	switch obj.GroupVersionKind().GroupKind() {
	case graph.KindDeployment:
		return e.deployment(obj)
	case graph.KindStatefulSet, graph.KindDaemonSet:
		return e.podOwner(obj)
	case graph.KindReplicaSet:
		return e.replicaSet(obj, nil)
	case graph.KindJob:
		return e.job(obj, root.Hook)
	case graph.KindPod:
		var p corev1.Pod
		if !convert(obj, &p) {
			return nil
		}
		return e.pod(&p)
	case graph.KindService:
		return e.service(obj)
	case graph.KindHPA:
		return e.autoscaler(obj)
	case graph.KindPVC:
		var pvc corev1.PersistentVolumeClaim
		if !convert(obj, &pvc) {
			return nil
		}
		return e.claim(&pvc)
	}
	if res := health.Of(obj); res.State == syncv1.HealthDegraded {
		chain := []syncv1.CauseLink{linkOf(obj, "%s", res.Message)}
		if root.Hook != "" {
			chain[0].Message = fmt.Sprintf("%s hook failed: %s", root.Hook, res.Message)
		}
		return chain
	}
	return nil
}

// convert turns a live object into its typed form.
func convert(obj *unstructured.Unstructured, out any) bool {
	return obj != nil && fromUnstructured(obj, out)
}

// deployment: not available -> its newest ReplicaSet -> a Pod.
func (e *engine) deployment(obj *unstructured.Unstructured) []syncv1.CauseLink {
	var d appsv1.Deployment
	if !convert(obj, &d) {
		return nil
	}
	want := replicas(d.Spec.Replicas)
	msg := ""
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse {
			msg = fmt.Sprintf("not progressing: %s: %s", c.Reason, c.Message)
		}
	}
	if msg == "" && d.Status.AvailableReplicas >= want && d.Status.UpdatedReplicas >= want {
		return nil
	}
	if msg == "" {
		msg = fmt.Sprintf("not available: %d of %d replicas available", d.Status.AvailableReplicas, want)
	}
	head := linkOf(obj, "%s", msg)
	var newest *appsv1.ReplicaSet
	for i := range e.s.ReplicaSets {
		rs := &e.s.ReplicaSets[i]
		if ownedBy(rs.OwnerReferences, d.UID) && (newest == nil || revision(rs) > revision(newest)) {
			newest = rs
		}
	}
	if newest == nil {
		if e.s.DeniedRead("list replicasets") {
			return []syncv1.CauseLink{e.noDeeper(head, "list replicasets")}
		}
		if rest := e.templateReferences(&d.Spec.Template.Spec); rest != nil {
			return append([]syncv1.CauseLink{head}, rest...)
		}
		return []syncv1.CauseLink{e.noDeeper(head, "")}
	}
	rsObj := toUnstructured(newest, "apps/v1", "ReplicaSet")
	return append([]syncv1.CauseLink{head}, e.replicaSet(rsObj, &d.Spec.Template.Spec)...)
}

func replicas(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}

func revision(rs *appsv1.ReplicaSet) int {
	n, _ := strconv.Atoi(rs.Annotations["deployment.kubernetes.io/revision"])
	return n
}

func ownedBy(refs []metav1OwnerReference, uid types.UID) bool {
	for _, o := range refs {
		if o.UID == uid {
			return true
		}
	}
	return false
}

// replicaSet: failing to create Pods (a missing ServiceAccount, say) or
// Pods that are not ready.
func (e *engine) replicaSet(obj *unstructured.Unstructured, template *corev1.PodSpec) []syncv1.CauseLink {
	var rs appsv1.ReplicaSet
	if !convert(obj, &rs) {
		return nil
	}
	if template == nil {
		template = &rs.Spec.Template.Spec
	}
	for _, c := range rs.Status.Conditions {
		if c.Type == appsv1.ReplicaSetReplicaFailure && c.Status == corev1.ConditionTrue {
			head := linkOf(obj, "cannot create Pods: %s: %s", c.Reason, c.Message)
			return append([]syncv1.CauseLink{head}, e.templateReferences(template)...)
		}
	}
	head := linkOf(obj, "%d of %d Pods ready", rs.Status.ReadyReplicas, replicas(rs.Spec.Replicas))
	return e.throughPods(head, rs.UID, template)
}

// podOwner: a StatefulSet or DaemonSet whose Pods are not all available.
func (e *engine) podOwner(obj *unstructured.Unstructured) []syncv1.CauseLink {
	var head syncv1.CauseLink
	var uid types.UID
	var template *corev1.PodSpec
	switch obj.GroupVersionKind().GroupKind() {
	case graph.KindStatefulSet:
		var s appsv1.StatefulSet
		if !convert(obj, &s) || s.Status.ReadyReplicas >= replicas(s.Spec.Replicas) {
			return nil
		}
		head = linkOf(obj, "not available: %d of %d replicas ready", s.Status.ReadyReplicas, replicas(s.Spec.Replicas))
		uid, template = s.UID, &s.Spec.Template.Spec
	default:
		var d appsv1.DaemonSet
		if !convert(obj, &d) || d.Status.NumberAvailable >= d.Status.DesiredNumberScheduled {
			return nil
		}
		head = linkOf(obj, "not available: %d of %d scheduled Pods available", d.Status.NumberAvailable, d.Status.DesiredNumberScheduled)
		uid, template = d.UID, &d.Spec.Template.Spec
	}
	return e.throughPods(head, uid, template)
}

// throughPods follows head to the first Pod owned by owner that shows a
// cause, or to what the Pod template refers to when no Pod does.
func (e *engine) throughPods(head syncv1.CauseLink, owner types.UID, template *corev1.PodSpec) []syncv1.CauseLink {
	for i := range e.s.Pods {
		p := &e.s.Pods[i]
		if !ownedBy(p.OwnerReferences, owner) {
			continue
		}
		if rest := e.pod(p); rest != nil {
			return append([]syncv1.CauseLink{head}, rest...)
		}
	}
	if rest := e.templateReferences(template); rest != nil {
		return append([]syncv1.CauseLink{head}, rest...)
	}
	if e.s.DeniedRead("list pods") {
		return []syncv1.CauseLink{e.noDeeper(head, "list pods")}
	}
	return []syncv1.CauseLink{e.noDeeper(head, "")}
}

// noDeeper ends a chain that found no deeper evidence, naming the list the
// account could not make, if any.
func (e *engine) noDeeper(head syncv1.CauseLink, deniedList string) syncv1.CauseLink {
	if deniedList != "" {
		head.Message += fmt.Sprintf("; the service account may not %s in namespace %s, so the diagnosis goes no deeper", deniedList, e.s.Namespace)
	}
	return head
}

// templateReferences blames the first required object a Pod template refers
// to that the API server says does not exist.
func (e *engine) templateReferences(spec *corev1.PodSpec) []syncv1.CauseLink {
	for _, r := range graph.PodReferences(e.s.Namespace, spec) {
		if l, ok := e.s.Lookup(r.ID); ok && l.Found == graph.Missing && !r.Optional {
			return []syncv1.CauseLink{link(r.ID, "v1", "not found; the Pod template refers to it in %s", r.Via)}
		}
	}
	return nil
}

// job: Failed (backoff limit, deadline) -> the Pod that failed.
func (e *engine) job(obj *unstructured.Unstructured, hook string) []syncv1.CauseLink {
	var j batchv1.Job
	if !convert(obj, &j) {
		return nil
	}
	what := "failed"
	if hook != "" {
		what = fmt.Sprintf("%s hook Job %s failed", hook, j.Name)
	}
	for _, c := range j.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			head := linkOf(obj, "%s: %s: %s", what, c.Reason, c.Message)
			return e.throughPods(head, j.UID, &j.Spec.Template.Spec)
		}
		if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
			return nil
		}
	}
	for i := range e.s.Pods {
		p := &e.s.Pods[i]
		if ownedBy(p.OwnerReferences, j.UID) {
			if rest := e.pod(p); rest != nil {
				return append([]syncv1.CauseLink{linkOf(obj, "not complete: %d active, %d failed", j.Status.Active, j.Status.Failed)}, rest...)
			}
		}
	}
	return nil
}

// sortedKeys lists m's keys in order.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// selectorString prints a Service selector stably: "app=web,tier=front".
func selectorString(sel map[string]string) string {
	var parts []string
	for _, k := range sortedKeys(sel) {
		parts = append(parts, k+"="+sel[k])
	}
	return strings.Join(parts, ",")
}
