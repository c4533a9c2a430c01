package diagnosis

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/graph"
)

// service: a selector that matches no Pods, a target port no Pod exposes,
// or no ready endpoint in its EndpointSlices.
func (e *engine) service(obj *unstructured.Unstructured) []syncv1.CauseLink {
	var svc corev1.Service
	sel, ok := graph.PodSelector(obj)
	if !ok || !convert(obj, &svc) {
		return nil
	}
	selector := selectorString(svc.Spec.Selector)
	podsListed := e.s.ListedSelectors[sel.String()]
	var selected []*corev1.Pod
	for i := range e.s.Pods {
		if p := &e.s.Pods[i]; p.Namespace == svc.Namespace && sel.Matches(labels.Set(p.Labels)) {
			selected = append(selected, p)
		}
	}
	if podsListed && len(selected) == 0 {
		return []syncv1.CauseLink{linkOf(obj, "selector %s matches no Pods", selector)}
	}
	if podsListed {
		if msg := e.unexposedPort(&svc, selected); msg != "" {
			return []syncv1.CauseLink{linkOf(obj, "%s", msg)}
		}
	}
	readyEndpoints, slicesListed := e.readyEndpoints(svc.Name)
	switch {
	case slicesListed && readyEndpoints > 0:
		return nil
	case !slicesListed && !podsListed:
		return nil
	}
	var head syncv1.CauseLink
	if slicesListed {
		head = linkOf(obj, "no ready endpoints in its EndpointSlices (selector %s)", selector)
	} else {
		head = linkOf(obj, "none of the Pods its selector %s matches is ready", selector)
	}
	if !podsListed {
		return []syncv1.CauseLink{e.noDeeper(head, e.deniedList("list pods"))}
	}
	for _, p := range selected {
		if rest := e.pod(p); rest != nil {
			return append([]syncv1.CauseLink{head}, rest...)
		}
	}
	if !slicesListed {
		return nil
	}
	return []syncv1.CauseLink{e.noDeeper(head, "")}
}

// deniedList is read if the account was refused it, else empty.
func (e *engine) deniedList(read string) string {
	if e.s.DeniedRead(read) {
		return read
	}
	return ""
}

// readyEndpoints counts the ready endpoints of a Service's EndpointSlices;
// false when they were not listed.
func (e *engine) readyEndpoints(service string) (int, bool) {
	if !e.s.ListedSlices[service] {
		return 0, false
	}
	n := 0
	for i := range e.s.EndpointSlices {
		es := &e.s.EndpointSlices[i]
		if es.Labels[discoveryv1.LabelServiceName] != service {
			continue
		}
		for _, ep := range es.Endpoints {
			if ep.Conditions.Ready == nil || *ep.Conditions.Ready {
				n++
			}
		}
	}
	return n, true
}

// unexposedPort names the first Service port whose target port none of the
// selected Pods exposes. A numeric target port counts as exposed when the
// Pods declare no ports at all, since declaring them is optional.
func (e *engine) unexposedPort(svc *corev1.Service, pods []*corev1.Pod) string {
	for _, sp := range svc.Spec.Ports {
		target := sp.TargetPort
		if target.Type == intstr.Int && target.IntVal == 0 {
			target = intstr.FromInt32(sp.Port)
		}
		declared, exposed := false, false
		for _, p := range pods {
			for _, c := range p.Spec.Containers {
				for _, cp := range c.Ports {
					declared = true
					if cp.Protocol == "" {
						cp.Protocol = corev1.ProtocolTCP
					}
					proto := sp.Protocol
					if proto == "" {
						proto = corev1.ProtocolTCP
					}
					if proto != cp.Protocol {
						continue
					}
					if (target.Type == intstr.String && cp.Name == target.StrVal) || (target.Type == intstr.Int && cp.ContainerPort == target.IntVal) {
						exposed = true
					}
				}
			}
		}
		if exposed || (target.Type == intstr.Int && !declared) {
			continue
		}
		name := fmt.Sprint(sp.Port)
		if sp.Name != "" {
			name = fmt.Sprintf("%q (%d)", sp.Name, sp.Port)
		}
		return fmt.Sprintf("port %s targets port %s, which none of the %d selected Pods exposes", name, target.String(), len(pods))
	}
	return ""
}

// autoscaler: a HorizontalPodAutoscaler whose scaleTargetRef does not exist.
func (e *engine) autoscaler(obj *unstructured.Unstructured) []syncv1.CauseLink {
	id, version, ok := graph.ScaleTarget(obj)
	if !ok {
		return []syncv1.CauseLink{linkOf(obj, "spec.scaleTargetRef names no target")}
	}
	if l, read := e.s.Lookup(id); !read || l.Found != graph.Missing {
		return nil
	}
	return []syncv1.CauseLink{
		linkOf(obj, "spec.scaleTargetRef names %s %s, which does not exist", id.Kind, id.Name),
		link(id, version, "not found"),
	}
}
