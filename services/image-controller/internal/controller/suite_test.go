package controller_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-billy/v5/util"
	gogit "github.com/go-git/go-git/v5"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/memory"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/manager"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/controlplane"
	testgit "github.com/kuvryn/kuvryn-sync/pkg/testkit/git"
	"github.com/kuvryn/kuvryn-sync/services/image-controller/internal/controller"
)

var (
	cp  *controlplane.ControlPlane
	k8s client.Client
	git *testgit.Server
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	startCtx, startCancel := context.WithTimeout(ctx, 2*time.Minute)
	var err error
	cp, err = controlplane.Start(startCtx, controlplane.Options{})
	startCancel()
	if err != nil {
		fmt.Println("starting control plane:", err)
		return 1
	}
	defer cp.Stop()
	if git, err = testgit.NewServer(testgit.Options{Username: "bot", Password: "push-s3cret"}); err != nil {
		fmt.Println("starting Git server:", err)
		return 1
	}
	defer git.Close()

	mgr, err := manager.NewWithOptions(manager.Service{Name: "image-controller"},
		manager.Options{MetricsBindAddress: "0", HealthProbeBindAddress: "0"}, cp.Config)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	if err := controller.Setup(mgr, controller.Options{WriteBack: true, RegistryQPS: 100, RegistryBurst: 50}); err != nil {
		fmt.Println(err)
		return 1
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	if k8s, err = client.New(cp.Config, client.Options{Scheme: mgr.GetScheme()}); err != nil {
		fmt.Println(err)
		return 1
	}
	code := m.Run()
	cancel()
	if err := <-done; err != nil {
		fmt.Println("manager:", err)
	}
	return code
}

func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "img-"}}
	if err := k8s.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := k8s.Create(t.Context(), obj); err != nil {
		t.Fatal(err)
	}
}

// eventually polls cond until it holds or the timeout passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func policy(t *testing.T, ns, name string) *syncv1.ImagePolicy {
	t.Helper()
	var ip syncv1.ImagePolicy
	if err := k8s.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &ip); err != nil {
		t.Fatal(err)
	}
	return &ip
}

func repository(t *testing.T, ns, name string) *syncv1.Repository {
	t.Helper()
	var r syncv1.Repository
	if err := k8s.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

func condition(conds []metav1.Condition, typ string) metav1.Condition {
	if c := meta.FindStatusCondition(conds, typ); c != nil {
		return *c
	}
	return metav1.Condition{}
}

// requestScan stamps the annotation the webhook receiver sets.
func requestScan(t *testing.T, ip *syncv1.ImagePolicy) {
	t.Helper()
	patch := client.MergeFrom(ip.DeepCopy())
	if ip.Annotations == nil {
		ip.Annotations = map[string]string{}
	}
	ip.Annotations[syncv1.ScanRequestedAtAnnotation] = time.Now().Format(time.RFC3339Nano)
	if err := k8s.Patch(t.Context(), ip, patch); err != nil {
		t.Fatal(err)
	}
}

// scans reads kuvryn_sync_image_scans_total{result}.
func scans(t *testing.T, result string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "kuvryn_sync_image_scans_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == result {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("kuvryn_sync_image_scans_total{result=%q} is not registered", result)
	return 0
}

func semver(ns, name, image, r string) *syncv1.ImagePolicy {
	return &syncv1.ImagePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: syncv1.ImagePolicySpec{Image: image, Interval: &metav1.Duration{Duration: time.Hour},
			Policy: syncv1.ImageSelectionPolicy{SemVer: &syncv1.SemVerPolicy{Range: r}}},
	}
}

// gitRepository serves files in a new Git repository and creates a
// Repository pushing image updates under path with labelled credentials.
func gitRepository(t *testing.T, ns, name, path string, files map[string]string) (*testgit.Repo, string) {
	t.Helper()
	repo, err := git.CreateRepo(ns + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	initial, err := repo.Commit(files, "initial")
	if err != nil {
		t.Fatal(err)
	}
	create(t, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-push", Labels: map[string]string{syncv1.GitCredentialsLabel: "true"}},
		Data:       map[string][]byte{"username": []byte("bot"), "password": []byte("push-s3cret")},
	})
	create(t, &syncv1.Repository{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: syncv1.RepositorySpec{
			Git:         syncv1.GitSource{URL: repo.URL(), Revision: "main"},
			ImageUpdate: &syncv1.ImageUpdateSpec{SecretRef: syncv1.LocalObjectReference{Name: name + "-push"}, Path: path},
		},
	})
	return repo, initial
}

// file reads path at the tip of main through a clone, as a user would.
func file(t *testing.T, repo *testgit.Repo, path string) string {
	t.Helper()
	fs := memfs.New()
	r, err := gogit.Clone(memory.NewStorage(), fs, &gogit.CloneOptions{URL: repo.URL(),
		Auth: &githttp.BasicAuth{Username: "bot", Password: "push-s3cret"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Head(); err != nil {
		t.Fatal(err)
	}
	data, err := util.ReadFile(fs, path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func keyOf(ns, name string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: name} }
