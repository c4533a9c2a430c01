package controlplane_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestControlPlane_APIServerRestartKeepsAddressDataAndUsers kills and starts
// kube-apiserver twice (the first is envtest's process, the second one of
// StartAPIServer's) and checks that the same address answers again with the
// objects written before, that users added before still authenticate, and
// that the other components still work.
func TestControlPlane_APIServerRestartKeepsAddressDataAndUsers(t *testing.T) {
	ctx := t.Context()
	cs := kubernetes.NewForConfigOrDie(cp.Config)
	ns := createNamespace(t, cs, "restart")
	aliceCfg, err := cp.AddUser("restart-alice")
	if err != nil {
		t.Fatal(err)
	}
	alice := kubernetes.NewForConfigOrDie(aliceCfg)

	for i := range 2 {
		name := "before-restart-" + string(rune('a'+i))
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := cp.KillAPIServer(ctx); err != nil {
			t.Fatalf("restart %d: killing: %v", i, err)
		}
		if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
			t.Fatalf("restart %d: the API server answered while killed", i)
		}
		if err := cp.StartAPIServer(ctx); err != nil {
			t.Fatalf("restart %d: starting: %v", i, err)
		}
		if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Fatalf("restart %d: ConfigMap written before the restart: %v", i, err)
		}
		// Forbidden, not Unauthorized: the client certificate is still trusted.
		if _, err := alice.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Fatalf("restart %d: listing as a user added before: got %v, want Forbidden", i, err)
		}
	}

	labels := map[string]string{"app": "after-restart"}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "after-restart", Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "web:1"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "Pod after-restart scheduled and Running on a kwok node", func() bool {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, "after-restart", metav1.GetOptions{})
		return err == nil && p.Spec.NodeName != "" && p.Status.Phase == corev1.PodRunning
	})
}
