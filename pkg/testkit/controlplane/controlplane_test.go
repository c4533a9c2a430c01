package controlplane_test

import (
	"context"
	"flag"
	"os"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kuvryn/kuvryn-sync/pkg/testkit/controlplane"
)

var cp *controlplane.ControlPlane

func TestMain(m *testing.M) {
	flag.Parse()
	// FuzzToLoopback, the package's fuzz target, needs no cluster.
	if controlplane.FuzzWorker() {
		os.Exit(m.Run())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	var err error
	cp, err = controlplane.Start(ctx, controlplane.Options{Full: true, CRDDir: "-"})
	cancel()
	if err != nil {
		println("starting control plane:", err.Error())
		os.Exit(1)
	}
	code := m.Run()
	if err := cp.Stop(); err != nil {
		println("stopping control plane:", err.Error())
	}
	os.Exit(code)
}

func TestControlPlane_DeploymentBecomesAvailable(t *testing.T) {
	ctx := t.Context()
	cs := kubernetes.NewForConfigOrDie(cp.Config)
	ns := createNamespace(t, cs, "deploy")
	labels := map[string]string{"app": "web"}
	replicas := int32(2)
	_, err := cs.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "web:1"}}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "Deployment web Available with 2 ready replicas", func() bool {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false
		}
		for _, c := range d.Status.Conditions {
			if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue {
				return d.Status.ReadyReplicas == replicas
			}
		}
		return false
	})
}

func TestControlPlane_JobCompletes(t *testing.T) {
	ctx := t.Context()
	cs := kubernetes.NewForConfigOrDie(cp.Config)
	ns := createNamespace(t, cs, "job")
	_, err := cs.BatchV1().Jobs(ns).Create(ctx, &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "migrate"},
		Spec: batchv1.JobSpec{
			Template: corev1.PodTemplateSpec{
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "migrate", Image: "migrate:1"}},
				},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "Job migrate Complete", func() bool {
		j, err := cs.BatchV1().Jobs(ns).Get(ctx, "migrate", metav1.GetOptions{})
		if err != nil {
			return false
		}
		for _, c := range j.Status.Conditions {
			if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
				return true
			}
		}
		return false
	})
}

func TestControlPlane_NewUserIsBoundByRBAC(t *testing.T) {
	ctx := t.Context()
	cfg, err := cp.AddUser("alice")
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "alice"}}, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("creating a Namespace as alice without RBAC: got %v, want Forbidden", err)
	}
	_, err = kubernetes.NewForConfigOrDie(cp.Impersonate("bob")).CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("listing Pods impersonating bob: got %v, want Forbidden", err)
	}
}

func createNamespace(t *testing.T, cs kubernetes.Interface, prefix string) string {
	t.Helper()
	ns, err := cs.CoreV1().Namespaces().Create(t.Context(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
