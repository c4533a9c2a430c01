package health

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// The kinds whose health is read from metadata are exactly those kstatus
// calls Current from their metadata alone, and not while deleted.
func TestStatusless_KindsAreHealthyFromTheirMetadataAlone(t *testing.T) {
	for gk := range statusless {
		t.Run(gk.String(), func(t *testing.T) {
			obj := &unstructured.Unstructured{}
			obj.SetGroupVersionKind(gk.WithVersion("v1"))
			obj.SetNamespace("shop")
			obj.SetName("settings")
			if got := Of(obj); got.State != syncv1.HealthHealthy {
				t.Fatalf("health of its metadata = %s (%s), want Healthy", got.State, got.Message)
			}
			obj.SetDeletionTimestamp(&metav1.Time{Time: time.Now()})
			if got := Of(obj); got.State == syncv1.HealthHealthy {
				t.Fatalf("health while deleted = Healthy, want anything else")
			}
		})
	}
}

// A Service's health follows from its metadata unless its desired spec
// makes it a LoadBalancer, which is Healthy only once it has an address.
func TestFromMetadata_ServicesButLoadBalancers(t *testing.T) {
	withSpec := func(apiVersion, kind string, spec map[string]any) *unstructured.Unstructured {
		obj := object(apiVersion, kind, 1, nil)
		if spec != nil {
			obj.Object["spec"] = spec
		}
		return obj
	}
	for _, tc := range []struct {
		name string
		obj  *unstructured.Unstructured
		want bool
	}{
		{"ConfigMap", withSpec("v1", "ConfigMap", nil), true},
		{"Service without a type", withSpec("v1", "Service", map[string]any{"ports": []any{map[string]any{"port": int64(80)}}}), true},
		{"ClusterIP Service", withSpec("v1", "Service", map[string]any{"type": "ClusterIP"}), true},
		{"NodePort Service", withSpec("v1", "Service", map[string]any{"type": "NodePort"}), true},
		{"LoadBalancer Service", withSpec("v1", "Service", map[string]any{"type": "LoadBalancer"}), false},
		{"Deployment", withSpec("apps/v1", "Deployment", nil), false},
		{"Service of another group", withSpec("serving.knative.dev/v1", "Service", nil), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := FromMetadata(tc.obj); got != tc.want {
				t.Fatalf("FromMetadata = %v, want %v", got, tc.want)
			}
		})
	}
}
