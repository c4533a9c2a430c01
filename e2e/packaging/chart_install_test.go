package packaging_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestChart_InstalledUnderAReleaseComesUp installs the chart, rendered for
// the release edge with every service and the receiver on, for real on the
// local control plane (kwok runs the Pods), and waits for every Deployment
// to become Available with all its replicas: the objects exist as rendered,
// named after the release, and the restricted Pod Security admission of
// kuvryn-sync-system lets every Pod in.
func TestChart_InstalledUnderAReleaseComesUp(t *testing.T) {
	installPrerequisites(t)
	objs := mustRenderChart(t, enabledValues(allServices())+"webhookReceiver: {enabled: true}\n")
	for _, o := range objs {
		if err := k8s.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(o.DeepCopy()),
			client.FieldOwner(fieldManager), client.ForceOwnership); err != nil {
			t.Fatalf("installing %s: %v", idOf(o), err)
		}
	}
	t.Cleanup(func() {
		for _, o := range objs {
			_ = k8s.Delete(context.Background(), o)
		}
	})
	deployments := ofKind(objs, "Deployment")
	if len(deployments) != len(services) {
		t.Fatalf("%d Deployments rendered, want one per service (%d)", len(deployments), len(services))
	}
	for _, d := range deployments {
		if !strings.HasPrefix(d.GetName(), chartPrefix) {
			t.Errorf("Deployment %s is not named after the release", d.GetName())
		}
		if err := waitAvailable(t.Context(), d.GetNamespace(), d.GetName()); err != nil {
			t.Error(err)
		}
	}
}

// waitAvailable waits until the Deployment reports Available with every
// replica ready, and says how far it got if it does not.
func waitAvailable(ctx context.Context, ns, name string) error {
	var dep appsv1.Deployment
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &dep); err != nil {
			return false, err
		}
		want := int32(1)
		if dep.Spec.Replicas != nil {
			want = *dep.Spec.Replicas
		}
		for _, c := range dep.Status.Conditions {
			if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue {
				return dep.Status.AvailableReplicas == want, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("Deployment %s/%s not Available: %w; status %+v", ns, name, err, dep.Status)
	}
	return nil
}
