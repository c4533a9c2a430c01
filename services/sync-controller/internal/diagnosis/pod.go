package diagnosis

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/graph"
)

type metav1OwnerReference = metav1.OwnerReference

func fromUnstructured(obj *unstructured.Unstructured, out any) bool {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, out) == nil
}

func toUnstructured(obj any, apiVersion, kind string) *unstructured.Unstructured {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		m = map[string]any{}
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	return u
}

func podLink(p *corev1.Pod, format string, args ...any) syncv1.CauseLink {
	return link(graph.ID("", "Pod", p.Namespace, p.Name), "v1", format, args...)
}

// pod returns the chain from a Pod that is not ready (or failed) to its
// root cause; nil for a ready or succeeded Pod.
func (e *engine) pod(p *corev1.Pod) []syncv1.CauseLink {
	if p.Status.Phase == corev1.PodSucceeded || (p.Status.Phase == corev1.PodRunning && ready(p)) {
		return nil
	}
	for _, r := range graph.PodReferences(p.Namespace, &p.Spec) {
		l, ok := e.s.Lookup(r.ID)
		if !ok || r.Optional {
			continue
		}
		switch {
		case l.Found == graph.Missing:
			return []syncv1.CauseLink{
				podLink(p, "%s; it refers to %s %s in %s", state(p), r.ID.Kind, r.ID.Name, r.Via),
				link(r.ID, "v1", "not found"),
			}
		case graph.GroupKind(r.ID) == graph.KindPVC && l.Found == graph.Present:
			var pvc corev1.PersistentVolumeClaim
			if e.s.Object(r.ID, &pvc) {
				if rest := e.claim(&pvc); rest != nil {
					return append([]syncv1.CauseLink{podLink(p, "%s; it mounts %s in %s", state(p), pvc.Name, r.Via)}, rest...)
				}
			}
		}
	}
	return []syncv1.CauseLink{podLink(p, "%s", state(p))}
}

func ready(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// state is the evidence of why a Pod is not ready, from the scheduler's
// condition and the containers' states, most telling first.
func state(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return fmt.Sprintf("%s and unschedulable: %s: %s", phase(p), c.Reason, c.Message)
		}
	}
	if msg := containers("init container", p.Status.InitContainerStatuses, nil); msg != "" {
		return phase(p) + ", " + msg
	}
	if msg := containers("container", p.Status.ContainerStatuses, p.Spec.Containers); msg != "" {
		return phase(p) + ", " + msg
	}
	if p.Status.Reason != "" {
		return fmt.Sprintf("%s: %s: %s", phase(p), p.Status.Reason, p.Status.Message)
	}
	return phase(p) + ", not ready"
}

func phase(p *corev1.Pod) string {
	if p.Status.Phase == "" {
		return string(corev1.PodPending)
	}
	return string(p.Status.Phase)
}

// containers describes the first container that failed, crashes, cannot
// pull its image or is not ready. A crash-looping container is described
// the same whether it is waiting, restarting or running at the moment, so
// that the cause stays the same while the loop goes on.
func containers(kind string, statuses []corev1.ContainerStatus, specs []corev1.Container) string {
	for _, s := range statuses {
		if t, looping := crashed(s); t != nil {
			reason := t.Reason
			if reason == "" {
				reason = "Error"
			}
			if !looping {
				return fmt.Sprintf("%s %q terminated with exit code %d (%s)", kind, s.Name, t.ExitCode, reason)
			}
			return fmt.Sprintf("%s %q is crash-looping (CrashLoopBackOff): last exit code %d (%s)", kind, s.Name, t.ExitCode, reason)
		}
		if w := s.State.Waiting; w != nil && w.Reason != "" && w.Reason != "ContainerCreating" && w.Reason != "PodInitializing" {
			switch w.Reason {
			case "CrashLoopBackOff":
				return fmt.Sprintf("%s %q is crash-looping (CrashLoopBackOff)", kind, s.Name)
			case "ImagePullBackOff", "ErrImagePull":
				// The kubelet alternates the two reasons while it retries;
				// one name keeps the cause the same meanwhile.
				return fmt.Sprintf("%s %q cannot pull image %s (ImagePullBackOff)", kind, s.Name, s.Image)
			case "InvalidImageName", "ErrImageNeverPull":
				return fmt.Sprintf("%s %q cannot pull image %s: %s: %s", kind, s.Name, s.Image, w.Reason, w.Message)
			}
			return fmt.Sprintf("%s %q is waiting: %s: %s", kind, s.Name, w.Reason, w.Message)
		}
	}
	for _, s := range statuses {
		if s.State.Running != nil && !s.Ready && kind == "container" {
			return fmt.Sprintf("container %q is running but not ready: %s", s.Name, probe(s.Name, specs))
		}
		if w := s.State.Waiting; w != nil && w.Reason != "" {
			return fmt.Sprintf("%s %q is waiting: %s", kind, s.Name, w.Reason)
		}
	}
	return ""
}

// crashed returns the termination that shows a container failing, and
// whether it restarts after it: a container that has restarted is looping,
// whatever its state at the moment; one that has not just terminated.
func crashed(s corev1.ContainerStatus) (*corev1.ContainerStateTerminated, bool) {
	failed := func(t *corev1.ContainerStateTerminated) bool {
		return t != nil && (t.ExitCode != 0 || t.Reason == "OOMKilled")
	}
	if t := s.LastTerminationState.Terminated; failed(t) && !s.Ready {
		return t, true
	}
	if t := s.State.Terminated; failed(t) {
		return t, s.RestartCount > 0
	}
	return nil, false
}

func probe(name string, specs []corev1.Container) string {
	for _, c := range specs {
		if c.Name != name || c.ReadinessProbe == nil {
			continue
		}
		h := c.ReadinessProbe.ProbeHandler
		switch {
		case h.HTTPGet != nil:
			return fmt.Sprintf("readiness probe failing (httpGet %s on port %s)", h.HTTPGet.Path, h.HTTPGet.Port.String())
		case h.TCPSocket != nil:
			return fmt.Sprintf("readiness probe failing (tcpSocket on port %s)", h.TCPSocket.Port.String())
		case h.Exec != nil:
			return fmt.Sprintf("readiness probe failing (exec %s)", strings.Join(h.Exec.Command, " "))
		case h.GRPC != nil:
			return fmt.Sprintf("readiness probe failing (grpc on port %d)", h.GRPC.Port)
		}
		return "readiness probe failing"
	}
	return "not ready"
}

// claim: a PersistentVolumeClaim not bound, and its volume if known.
func (e *engine) claim(pvc *corev1.PersistentVolumeClaim) []syncv1.CauseLink {
	id := graph.ID("", graph.KindPVC.Kind, pvc.Namespace, pvc.Name)
	if pvc.Spec.VolumeName != "" {
		pv := graph.ID("", graph.KindPV.Kind, "", pvc.Spec.VolumeName)
		l, _ := e.s.Lookup(pv)
		switch l.Found {
		case graph.Missing:
			return []syncv1.CauseLink{
				link(id, "v1", "%s, names volume %s", claimPhase(pvc), pvc.Spec.VolumeName),
				link(pv, "v1", "not found"),
			}
		case graph.Present:
			var v corev1.PersistentVolume
			if e.s.Object(pv, &v) && v.Status.Phase != corev1.VolumeBound && v.Status.Phase != "" {
				return []syncv1.CauseLink{
					link(id, "v1", "%s, bound to volume %s", claimPhase(pvc), pvc.Spec.VolumeName),
					link(pv, "v1", "%s: %s", v.Status.Phase, v.Status.Message),
				}
			}
		}
	}
	if pvc.Status.Phase == corev1.ClaimBound {
		return nil
	}
	class := "the default storage class"
	if pvc.Spec.StorageClassName != nil {
		class = fmt.Sprintf("storage class %q", *pvc.Spec.StorageClassName)
	}
	if pvc.Spec.VolumeName != "" {
		head := link(id, "v1", "%s: not bound to its volume %s", claimPhase(pvc), pvc.Spec.VolumeName)
		if l, _ := e.s.Lookup(graph.ID("", graph.KindPV.Kind, "", pvc.Spec.VolumeName)); l.Found == graph.Denied {
			head.Message += "; the service account may not get persistentvolumes (only a ClusterRole grants it), so the diagnosis goes no deeper"
		}
		return []syncv1.CauseLink{head}
	}
	return []syncv1.CauseLink{link(id, "v1", "%s: no PersistentVolume bound (%s)", claimPhase(pvc), class)}
}

func claimPhase(pvc *corev1.PersistentVolumeClaim) string {
	if pvc.Status.Phase == "" {
		return string(corev1.ClaimPending)
	}
	return string(pvc.Status.Phase)
}
