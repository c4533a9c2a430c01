package scenarios_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	testregistry "github.com/kuvryn/kuvryn-sync/pkg/testkit/registry"
)

// TestE2E_NewImageTagBecomesACommitAndAwaitsApproval: a tag pushed to the
// registry is selected by an ImagePolicy, committed to Git by the
// image-controller, fetched and rendered into a new Revision, and, since
// the Application is manual, waits for approval with a plan showing the
// new image.
func TestE2E_NewImageTagBecomesACommitAndAwaitsApproval(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-image")
	reg := testregistry.Start(t, testregistry.Options{})
	image := reg.Host() + "/acme/api"
	push := func(tag string) string {
		t.Helper()
		return image + ":" + tag + "@" + reg.Push(t, "acme/api", tag)[tag].String()
	}
	first := push("1.0.0")

	gitRepo, err := env.Git.CreateRepo(ns + "-platform")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gitRepo.Commit(map[string]string{
		".ksync.yaml": "metadata: {name: api}\nspec:\n  source: {path: apps/api}\n  serviceAccountName: deployer\n  sync: {automatic: false}\n",
		"apps/api/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  replicas: 1
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers:
        - name: api
          image: ` + first + ` # {"$imagepolicy": "` + ns + `:api"}
`,
	}, "initial"); err != nil {
		t.Fatal(err)
	}
	for _, obj := range []client.Object{
		&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "push", Labels: map[string]string{syncv1.GitCredentialsLabel: "true"}},
			Data:       map[string][]byte{"token": []byte("unused-by-the-test-server")},
		},
		&syncv1.Repository{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "platform"},
			Spec: syncv1.RepositorySpec{
				Git:          syncv1.GitSource{URL: gitRepo.URL(), Revision: "main"},
				PollInterval: &metav1.Duration{Duration: 5 * time.Second},
				ImageUpdate:  &syncv1.ImageUpdateSpec{SecretRef: syncv1.LocalObjectReference{Name: "push"}, Path: "apps"},
			},
		},
		&syncv1.ImagePolicy{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api"},
			Spec: syncv1.ImagePolicySpec{Image: image, Interval: &metav1.Duration{Duration: time.Hour},
				Policy: syncv1.ImageSelectionPolicy{SemVer: &syncv1.SemVerPolicy{Range: ">=1.0.0"}}},
		},
	} {
		if err := env.Client.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	var app syncv1.Application
	awaiting := func(what string, rev func(string) bool) {
		t.Helper()
		eventually(t, 3*time.Minute, what, func() bool {
			err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "api"}, &app)
			return err == nil && rev(app.Status.DesiredRevision) &&
				meta.IsStatusConditionTrue(app.Status.Conditions, syncv1.ConditionAwaitingApproval)
		})
	}
	awaiting("the first Revision AwaitingApproval", func(r string) bool { return r != "" })
	firstRev := app.Status.DesiredRevision
	var ip syncv1.ImagePolicy
	eventually(t, time.Minute, "the ImagePolicy selecting 1.0.0", func() bool {
		return env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "api"}, &ip) == nil && ip.Status.LatestImage == first
	})
	initial, err := gitRepo.Head("main")
	if err != nil {
		t.Fatal(err)
	}

	second := push("1.1.0")
	patch := client.MergeFrom(ip.DeepCopy())
	ip.Annotations = map[string]string{syncv1.ScanRequestedAtAnnotation: time.Now().Format(time.RFC3339Nano)}
	if err := env.Client.Patch(t.Context(), &ip, patch); err != nil {
		t.Fatal(err)
	}

	var repo syncv1.Repository
	eventually(t, 2*time.Minute, "the image-controller's commit of 1.1.0", func() bool {
		err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "platform"}, &repo)
		return err == nil && repo.Status.ImageUpdate != nil && repo.Status.ImageUpdate.LastPushCommit != "" &&
			meta.IsStatusConditionTrue(repo.Status.Conditions, syncv1.ConditionImagesUpdated)
	})
	head, err := gitRepo.Head("main")
	if err != nil || head != repo.Status.ImageUpdate.LastPushCommit || head == initial {
		t.Fatalf("main is at %s (%v), want the image-controller's commit %s after %s", head, err, repo.Status.ImageUpdate.LastPushCommit, initial)
	}

	awaiting("a new Revision of the bump AwaitingApproval", func(r string) bool { return r != "" && r != firstRev })
	// AwaitingApproval may still be the first Revision's for a moment.
	var rev syncv1.Revision
	eventually(t, time.Minute, "the plan of Revision "+app.Status.DesiredRevision, func() bool {
		return env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: app.Status.DesiredRevision}, &rev) == nil &&
			rev.Status.Plan != nil
	})
	shown := false
	for _, e := range rev.Status.Plan.Entries {
		if e.Kind == "Deployment" && e.Name == "api" && strings.Contains(e.Diff, second) {
			shown = true
		}
	}
	if !shown {
		t.Errorf("the plan of %s does not show the Deployment changing to %s: %+v", rev.Name, second, rev.Status.Plan.Entries)
	}
}
