package graph

import (
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kuvryn/kuvryn-sync/pkg/desiredstate"
)

// convert turns a live object into its typed form; false if it does not fit.
func convert(obj *unstructured.Unstructured, out runtime.Object) bool {
	return obj != nil && runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, out) == nil
}

// PodTemplate returns the Pod template of a workload object (Deployment,
// StatefulSet, DaemonSet, ReplicaSet, Job, CronJob).
func PodTemplate(obj *unstructured.Unstructured) (*corev1.PodTemplateSpec, bool) {
	switch obj.GroupVersionKind().GroupKind() {
	case KindDeployment:
		var d appsv1.Deployment
		return &d.Spec.Template, convert(obj, &d)
	case KindStatefulSet:
		var s appsv1.StatefulSet
		return &s.Spec.Template, convert(obj, &s)
	case KindDaemonSet:
		var d appsv1.DaemonSet
		return &d.Spec.Template, convert(obj, &d)
	case KindReplicaSet:
		var r appsv1.ReplicaSet
		return &r.Spec.Template, convert(obj, &r)
	case KindJob:
		var j batchv1.Job
		return &j.Spec.Template, convert(obj, &j)
	case KindCronJob:
		var c batchv1.CronJob
		return &c.Spec.JobTemplate.Spec.Template, convert(obj, &c)
	}
	return nil, false
}

// PodSelector returns the selector of the Pods a workload or a Service
// selects; false when it selects none by label (no selector, an empty one,
// or a kind that selects nothing).
func PodSelector(obj *unstructured.Unstructured) (labels.Selector, bool) {
	var sel *metav1.LabelSelector
	switch obj.GroupVersionKind().GroupKind() {
	case KindService:
		var s corev1.Service
		if !convert(obj, &s) || len(s.Spec.Selector) == 0 || s.Spec.Type == corev1.ServiceTypeExternalName {
			return nil, false
		}
		return labels.SelectorFromSet(s.Spec.Selector), true
	case KindDeployment:
		var d appsv1.Deployment
		if convert(obj, &d) {
			sel = d.Spec.Selector
		}
	case KindStatefulSet:
		var s appsv1.StatefulSet
		if convert(obj, &s) {
			sel = s.Spec.Selector
		}
	case KindDaemonSet:
		var d appsv1.DaemonSet
		if convert(obj, &d) {
			sel = d.Spec.Selector
		}
	case KindReplicaSet:
		var r appsv1.ReplicaSet
		if convert(obj, &r) {
			sel = r.Spec.Selector
		}
	case KindJob:
		var j batchv1.Job
		if convert(obj, &j) {
			sel = j.Spec.Selector
		}
	}
	if sel == nil || (len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0) {
		return nil, false
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	return s, err == nil
}

// ScaleTarget returns what a HorizontalPodAutoscaler scales, and the version
// to read it at.
func ScaleTarget(obj *unstructured.Unstructured) (desiredstate.ObjectID, string, bool) {
	var hpa autoscalingv2.HorizontalPodAutoscaler
	if !convert(obj, &hpa) || hpa.Spec.ScaleTargetRef.Name == "" || hpa.Spec.ScaleTargetRef.Kind == "" {
		return desiredstate.ObjectID{}, "", false
	}
	ref := hpa.Spec.ScaleTargetRef
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return desiredstate.ObjectID{}, "", false
	}
	return ID(gv.Group, ref.Kind, obj.GetNamespace(), ref.Name), gv.Version, true
}

// IngressServices lists the Services an Ingress routes to, sorted.
func IngressServices(obj *unstructured.Unstructured) []desiredstate.ObjectID {
	var ing networkingv1.Ingress
	if !convert(obj, &ing) {
		return nil
	}
	var refs []Reference
	add := func(b *networkingv1.IngressBackend) {
		if b != nil && b.Service != nil && b.Service.Name != "" {
			refs = append(refs, Reference{ID: ID("", KindService.Kind, obj.GetNamespace(), b.Service.Name)})
		}
	}
	add(ing.Spec.DefaultBackend)
	for _, rule := range ing.Spec.Rules {
		if rule.HTTP == nil {
			continue
		}
		for i := range rule.HTTP.Paths {
			add(&rule.HTTP.Paths[i].Backend)
		}
	}
	var ids []desiredstate.ObjectID
	for _, r := range dedupe(refs) {
		ids = append(ids, r.ID)
	}
	return ids
}
