package packaging_test

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestShards_ChartInstalledPutsEveryShardBehindItsServices installs the
// chart with a shard for real (kwok runs the Pods), waits for every
// Deployment to become Available, and reads the EndpointSlices the control
// plane makes: the webhook Service and each controller's metrics Service
// reach the Pods of the default Deployment and of the shard's, and no
// Deployment owns another's Pods. The webhook configurations are left out:
// no webhook server runs under kwok, and they fail closed.
func TestShards_ChartInstalledPutsEveryShardBehindItsServices(t *testing.T) {
	installPrerequisites(t)
	const release = "sharded"
	prefix := release + "-kuvryn-sync"
	objs := mustRenderChartAs(t, release, "shards: [a]\nreplicaCount: 1\n")
	var installed []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "MutatingWebhookConfiguration" || o.GetKind() == "ValidatingWebhookConfiguration" {
			continue
		}
		if err := k8s.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(o.DeepCopy()),
			client.FieldOwner(fieldManager), client.ForceOwnership); err != nil {
			t.Fatalf("installing %s: %v", idOf(o), err)
		}
		installed = append(installed, o)
	}
	t.Cleanup(func() {
		for _, o := range installed {
			_ = k8s.Delete(context.Background(), o)
		}
	})
	for _, d := range ofKind(objs, "Deployment") {
		if err := waitAvailable(t.Context(), d.GetNamespace(), d.GetName()); err != nil {
			t.Fatal(err)
		}
	}

	// podsOf lists the Pods each Deployment's ReplicaSets own, by their
	// owner chain rather than by label, so an overlap shows.
	podsOf := map[string][]string{}
	var pods corev1.PodList
	if err := k8s.List(t.Context(), &pods, client.InNamespace(systemNamespace)); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		for _, d := range ofKind(objs, "Deployment") {
			if ownedByDeployment(t, p, d.GetName()) {
				podsOf[d.GetName()] = append(podsOf[d.GetName()], p.Name)
			}
		}
	}

	behind := map[string][]string{prefix + "-webhook": {prefix, prefix + "-shard-a"}}
	for _, c := range controllers {
		name := prefix + serviceNamed(c).chartSuffix
		behind[name+"-metrics"] = []string{name, name + "-shard-a"}
	}
	for svc, deployments := range behind {
		var want []string
		for _, d := range deployments {
			if len(podsOf[d]) == 0 {
				t.Errorf("Deployment %s owns no running Pod", d)
			}
			want = append(want, podsOf[d]...)
		}
		slices.Sort(want)
		var got []string
		err := wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			got = endpointPods(ctx, t, svc)
			return slices.Equal(got, want), nil
		})
		if err != nil {
			t.Errorf("Service %s reaches the Pods %v, want those of %v: %v", svc, got, want, err)
		}
	}
}

// ownedByDeployment reports whether the Pod's ReplicaSet belongs to the
// Deployment.
func ownedByDeployment(t *testing.T, p corev1.Pod, deployment string) bool {
	t.Helper()
	for _, ref := range p.OwnerReferences {
		if ref.Kind != "ReplicaSet" {
			continue
		}
		rs := &unstructured.Unstructured{}
		rs.SetAPIVersion("apps/v1")
		rs.SetKind("ReplicaSet")
		if err := k8s.Get(t.Context(), client.ObjectKey{Namespace: p.Namespace, Name: ref.Name}, rs); err != nil {
			t.Fatalf("ReplicaSet of Pod %s: %v", p.Name, err)
		}
		for _, owner := range rs.GetOwnerReferences() {
			if owner.Kind == "Deployment" && owner.Name == deployment {
				return true
			}
		}
	}
	return false
}

// endpointPods lists the Pods in the Service's EndpointSlices, sorted.
func endpointPods(ctx context.Context, t *testing.T, svc string) []string {
	t.Helper()
	var list discoveryv1.EndpointSliceList
	if err := k8s.List(ctx, &list, client.InNamespace(systemNamespace),
		client.MatchingLabels{discoveryv1.LabelServiceName: svc}); err != nil {
		t.Fatal(err)
	}
	var pods []string
	for _, s := range list.Items {
		for _, e := range s.Endpoints {
			if e.TargetRef != nil && e.TargetRef.Kind == "Pod" {
				pods = append(pods, e.TargetRef.Name)
			}
		}
	}
	slices.Sort(pods)
	return pods
}
