package commands

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// createLive creates obj as admin, through unstructured since the test
// client knows only the Kuvryn Sync kinds, and returns its UID.
func createLive(t *testing.T, obj runtime.Object, apiVersion, kind string) string {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	if err := k8s.Create(t.Context(), u); err != nil {
		t.Fatal(err)
	}
	return string(u.GetUID())
}

// liveApplication creates, with no controller running, the objects of an
// Application: a Deployment with its ReplicaSet and Pod, which mounts a
// ConfigMap that does not exist, and a Service.
func liveApplication(t *testing.T, ns string) {
	t.Helper()
	labels := map[string]string{"app": "api"}
	spec := corev1.PodSpec{
		Containers: []corev1.Container{{Name: "app", Image: "ghcr.io/acme/api:1.0.0"}},
		Volumes:    []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "api-settings"}}}}},
	}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec}
	sel := &metav1.LabelSelector{MatchLabels: labels}
	dep := createLive(t, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: sel, Template: tmpl}}, "apps/v1", "Deployment")
	owner := func(kind, name, uid string) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name, UID: typesUID(uid), Controller: ptr.To(true)}}
	}
	rs := createLive(t, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api-5d8f", Labels: labels, OwnerReferences: owner("Deployment", "api", dep)},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](1), Selector: sel, Template: tmpl}}, "apps/v1", "ReplicaSet")
	createLive(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api-5d8f-x2x9q", Labels: labels, OwnerReferences: owner("ReplicaSet", "api-5d8f", rs)},
		Spec: spec}, "v1", "Pod")
	createLive(t, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api"},
		Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Port: 80}}}}, "v1", "Service")
}

func TestGraph_PrintsTheLiveGraph(t *testing.T) {
	ns := namespace(t, "graph", nil)
	liveApplication(t, ns)
	app := application(ns, "api")
	app.Status.DesiredRevision = "api-1"
	createApplication(t, app)
	createRevision(t, ns, "api", "api-1", syncv1.RevisionStatus{Inventory: &syncv1.Inventory{Entries: []string{
		ns + "_api_apps_Deployment_v1", ns + "_api__Service_v1",
	}}})
	empty := application(ns, "fresh")
	empty.Status.DesiredRevision = "fresh-1"
	createApplication(t, empty)
	createRevision(t, ns, "fresh", "fresh-1", syncv1.RevisionStatus{})

	t.Run("as a text tree", func(t *testing.T) {
		r := ksync(t, "graph", "api", "-n", ns)
		r.expect(t, 0)
		golden(t, "graph", r.stdout)
	})
	t.Run("as JSON", func(t *testing.T) {
		r := ksync(t, "graph", "api", "-n", ns, "-o", "json")
		r.expect(t, 0)
		var got graphExport
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatalf("-o json is not JSON: %v\n%s", err, r.stdout)
		}
		if got.Revision != "api-1" || got.Graph == nil || len(got.Nodes) != 5 || len(got.Edges) != 3 {
			t.Errorf("export:\n%s", r.stdout)
		}
	})
	t.Run("as DOT that Graphviz accepts", func(t *testing.T) {
		r := ksync(t, "graph", "api", "-n", ns, "-o", "dot")
		r.expect(t, 0)
		dot, err := exec.LookPath("dot")
		if err != nil {
			t.Skip("Graphviz dot is not installed (apt-get install graphviz); .ci/run installs it")
		}
		cmd := exec.Command(dot, "-Tsvg")
		cmd.Stdin = strings.NewReader(r.stdout)
		var svg, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &svg, &stderr
		if err := cmd.Run(); err != nil || stderr.Len() > 0 {
			t.Fatalf("dot -Tsvg refused:\n%s\n%v %s", r.stdout, err, stderr.String())
		}
		if !strings.Contains(svg.String(), "x2x9q") {
			t.Errorf("the SVG lacks the Pod:\n%s", svg.String())
		}
	})
	t.Run("fails for a Revision that applied nothing", func(t *testing.T) {
		r := ksync(t, "graph", "fresh", "-n", ns)
		r.expect(t, exitFailed)
		if want := "ksync: Revision graph/fresh-1 has applied nothing yet (status.inventory is empty); the graph starts from the objects a rollout applied\n"; r.stderr != want {
			t.Errorf("stderr %q, want %q", r.stderr, want)
		}
	})
	t.Run("reads with the user's own permissions", func(t *testing.T) {
		r := ksync(t, "graph", "api", "-n", ns, "--kubeconfig", viewerKubeconfig(t, ns))
		r.expect(t, 0)
		if !strings.Contains(r.stdout, "Not readable with your permissions: list pods, list replicasets") {
			t.Errorf("stdout:\n%s", r.stdout)
		}
	})
}

func typesUID(s string) types.UID { return types.UID(s) }

// viewerKubeconfig writes a kubeconfig for a new user who may read the
// Application, its Revisions and its objects in ns, but list neither Pods
// nor ReplicaSets.
func viewerKubeconfig(t *testing.T, ns string) string {
	t.Helper()
	cfg, err := clusterCP.AddUser("graph-viewer")
	if err != nil {
		t.Fatal(err)
	}
	createLive(t, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "graph-viewer"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{syncv1.GroupVersion.Group}, Resources: []string{"applications", "revisions"}, Verbs: []string{"get"}},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"services", "configmaps"}, Verbs: []string{"get"}},
		{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list"}},
	}}, "rbac.authorization.k8s.io/v1", "Role")
	createLive(t, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "graph-viewer"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "graph-viewer"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "graph-viewer"}},
	}, "rbac.authorization.k8s.io/v1", "RoleBinding")
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["graph-viewer"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "graph-viewer", Namespace: ns}
	kc.CurrentContext = "test"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}
