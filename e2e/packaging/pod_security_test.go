package packaging_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// podFrom is the Pod a Deployment's ReplicaSet would create.
func podFrom(d *unstructured.Unstructured, name string) *unstructured.Unstructured {
	spec, _, _ := unstructured.NestedMap(d.Object, "spec", "template", "spec")
	labels, _, _ := unstructured.NestedStringMap(d.Object, "spec", "template", "metadata", "labels")
	pod := &unstructured.Unstructured{Object: map[string]any{"spec": runtime.DeepCopyJSONValue(spec)}}
	pod.SetAPIVersion("v1")
	pod.SetKind("Pod")
	pod.SetName(name)
	pod.SetNamespace(d.GetNamespace())
	pod.SetLabels(labels)
	return pod
}

// TestPods_PassRestrictedPodSecurity creates, as a dry run, the Pod of every
// Deployment in kuvryn-sync-system, where deploy/default enforces the
// restricted Pod Security Standard: the API server's PodSecurity admission
// must admit each one, and refuse a Pod whose security context was removed.
func TestPods_PassRestrictedPodSecurity(t *testing.T) {
	installPrerequisites(t)
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	if err := k8s.Get(t.Context(), client.ObjectKey{Name: systemNamespace}, ns); err != nil {
		t.Fatal(err)
	}
	if got := ns.GetLabels()["pod-security.kubernetes.io/enforce"]; got != "restricted" {
		t.Fatalf("deploy/default labels Namespace %s pod-security.kubernetes.io/enforce=%q, want restricted", systemNamespace, got)
	}

	for source, deployments := range deploymentSources(t) {
		for _, d := range deployments {
			pod := podFrom(d, d.GetName()+"-pod-security")
			if err := k8s.Create(t.Context(), pod, client.DryRunAll); err != nil {
				t.Errorf("%s: the Pod of %s is refused: %v", source, idOf(d), err)
			}
		}
	}

	t.Run("a Pod without its security context is refused", func(t *testing.T) {
		pod := podFrom(deployment(t, deployDefault(t), "source-controller"), "weakened-pod-security")
		unstructured.RemoveNestedField(pod.Object, "spec", "securityContext")
		containers, _, _ := unstructured.NestedSlice(pod.Object, "spec", "containers")
		for _, c := range containers {
			delete(c.(map[string]any), "securityContext")
		}
		if err := unstructured.SetNestedSlice(pod.Object, containers, "spec", "containers"); err != nil {
			t.Fatal(err)
		}
		err := k8s.Create(t.Context(), pod, client.DryRunAll)
		if err == nil || !strings.Contains(err.Error(), "violates PodSecurity") {
			t.Fatalf("a Pod without a security context was not refused by PodSecurity: %v", err)
		}
	})
}
