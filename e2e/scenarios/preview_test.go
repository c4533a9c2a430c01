package scenarios_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	testgit "github.com/kuvryn/kuvryn-sync/pkg/testkit/git"
	"github.com/kuvryn/kuvryn-sync/pkg/testkit/githost"
)

// previewPassword is the value of the Secret the pull request adds; it
// must never reach the fake GitHub.
const previewPassword = "pr-secret-value-7f3a"

// TestE2E_PullRequestPreviewPlansOnThePullRequestAndChangesNothing: a
// Repository with two Applications and previews on. A pull request event
// through the receiver, for a branch that changes one app's Deployment image
// and adds a Secret, gives the fake GitHub a pending then a success commit
// status and one comment holding the Deployment's diff and the Secret
// redacted; the cluster's objects of both apps see no write. A second push
// updates the same comment; closing the pull request deletes the preview
// Revisions; a fork's pull request is refused with a status saying why.
func TestE2E_PullRequestPreviewPlansOnThePullRequestAndChangesNothing(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-preview")
	host := githost.Start(t, githost.Options{Kind: githost.GitHub, Token: "gh-token", Repository: "acme/platform"})
	files := map[string]string{
		".ksync.yaml": `applications:
  - metadata: {name: web}
    spec: {source: {path: web}, serviceAccountName: deployer, sync: {automatic: true}}
  - metadata: {name: api}
    spec: {source: {path: api}, serviceAccountName: deployer, sync: {automatic: true}}
`,
		"web/deployment.yaml": deployment("web", "web:1.0"),
		"api/configmap.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: api}\ndata: {version: v1}\n",
	}
	gitRepo := webhookRepository(t, ns, "platform", files)
	for _, obj := range []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "github", Namespace: ns},
			StringData: map[string]string{"url": host.URL(), "token": host.Token()}},
		&syncv1.NotificationSink{ObjectMeta: metav1.ObjectMeta{Name: "github", Namespace: ns},
			Spec: syncv1.NotificationSinkSpec{Type: syncv1.SinkGitHub, SecretRef: syncv1.LocalObjectReference{Name: "github"}}},
	} {
		if err := env.Client.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	repo := get(t, &syncv1.Repository{}, ns, "platform")
	patch := client.MergeFrom(repo.DeepCopy())
	repo.Spec.Previews = &syncv1.PreviewsSpec{
		PullRequests:   syncv1.PreviewProviderGitHub,
		KeepAfterClose: &metav1.Duration{Duration: 5 * time.Second},
		SinkRef:        &syncv1.LocalObjectReference{Name: "github"},
	}
	if err := env.Client.Patch(t.Context(), repo, patch); err != nil {
		t.Fatal(err)
	}
	webRev := waitHealthy(t, ns, "web", "")
	waitHealthy(t, ns, "api", "")
	writes := watchWrites(t, ns)

	head, err := gitRepo.Apply("feature", "new image and a Secret",
		testgit.File("web/deployment.yaml", deployment("web", "web:2.0")),
		testgit.File("web/secret.yaml", "apiVersion: v1\nkind: Secret\nmetadata: {name: web-db}\nstringData: {password: "+previewPassword+"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := gitRepo.SetRef("refs/pull/7/head", head); err != nil {
		t.Fatal(err)
	}
	if status, body := pullRequestHook(t, ns, "platform", gitRepo.URL(), "opened", 7, head, "acme/platform"); status != http.StatusAccepted {
		t.Fatalf("pull_request opened: %d %q, want 202", status, body)
	}
	eventually(t, 3*time.Minute, "a success commit status for web on "+head+" and its comment", func() bool {
		s, ok := host.LatestStatus(head, "kuvryn-sync/web")
		return ok && s.State == "success" && commented(host, 7, "web:2.0")
	})
	states := []string{}
	for _, s := range host.Statuses(head) {
		if s.Context == "kuvryn-sync/web" {
			states = append(states, s.State)
		}
	}
	if len(states) < 2 || states[0] != "pending" {
		t.Errorf("commit statuses of web: %v, want pending then success", states)
	}
	if _, ok := host.LatestStatus(head, "kuvryn-sync/api"); ok {
		t.Errorf("a commit status for api, which the pull request does not change")
	}
	comment := onlyComment(t, host, 7)
	for _, want := range []string{"web", "Deployment", "web:2.0", "web-db", syncv1.RedactedMarker} {
		if !strings.Contains(comment.Body, want) {
			t.Errorf("the comment does not hold %q:\n%s", want, comment.Body)
		}
	}
	for _, r := range host.Requests() {
		if bytes.Contains(r.Body, []byte(previewPassword)) {
			t.Fatalf("the Secret's value reached GitHub in %s %s", r.Method, r.Path)
		}
	}

	second, err := gitRepo.Apply("feature", "another image", testgit.File("web/deployment.yaml", deployment("web", "web:3.0")))
	if err != nil {
		t.Fatal(err)
	}
	if err := gitRepo.SetRef("refs/pull/7/head", second); err != nil {
		t.Fatal(err)
	}
	if status, body := pullRequestHook(t, ns, "platform", gitRepo.URL(), "synchronize", 7, second, "acme/platform"); status != http.StatusAccepted {
		t.Fatalf("pull_request synchronize: %d %q, want 202", status, body)
	}
	eventually(t, 3*time.Minute, "a success commit status for web on "+second+" and its comment", func() bool {
		s, ok := host.LatestStatus(second, "kuvryn-sync/web")
		return ok && s.State == "success" && commented(host, 7, "web:3.0")
	})
	updated := onlyComment(t, host, 7)
	if updated.ID != comment.ID || updated.Updated == 0 || !strings.Contains(updated.Body, "web:3.0") {
		t.Errorf("after the second push: comment %d (edited %d times) holding web:3.0 %v, want comment %d updated in place",
			updated.ID, updated.Updated, strings.Contains(updated.Body, "web:3.0"), comment.ID)
	}

	if status, body := pullRequestHook(t, ns, "platform", gitRepo.URL(), "closed", 7, second, "acme/platform"); status != http.StatusAccepted {
		t.Fatalf("pull_request closed: %d %q, want 202", status, body)
	}
	eventually(t, 2*time.Minute, "the preview Revisions of pr-7 deleted", func() bool {
		var list syncv1.RevisionList
		if err := env.Client.List(t.Context(), &list, client.InNamespace(ns), client.MatchingLabels{syncv1.PreviewLabel: "pr-7"}); err != nil {
			return false
		}
		return len(list.Items) == 0
	})

	forkHead, err := gitRepo.Apply("from-fork", "a fork's change", testgit.File("web/deployment.yaml", deployment("web", "web:evil")))
	if err != nil {
		t.Fatal(err)
	}
	if err := gitRepo.SetRef("refs/pull/8/head", forkHead); err != nil {
		t.Fatal(err)
	}
	if status, body := pullRequestHook(t, ns, "platform", gitRepo.URL(), "opened", 8, forkHead, "mallory/platform"); status != http.StatusAccepted {
		t.Fatalf("a fork's pull_request opened: %d %q, want 202", status, body)
	}
	eventually(t, 2*time.Minute, "pr-8 refused as a fork's", func() bool {
		for _, p := range get(t, &syncv1.Repository{}, ns, "platform").Status.Previews {
			if p.Name == "pr-8" {
				return p.State == syncv1.PreviewRefused && strings.Contains(p.Message, "fork")
			}
		}
		return false
	})
	var forkRevs syncv1.RevisionList
	if err := env.Client.List(t.Context(), &forkRevs, client.InNamespace(ns), client.MatchingLabels{syncv1.PreviewLabel: "pr-8"}); err != nil || len(forkRevs.Items) != 0 {
		t.Errorf("a fork's pull request has %d preview Revisions (%v), want none", len(forkRevs.Items), err)
	}

	if w := writes.seen(); len(w) > 0 {
		t.Errorf("previews wrote to the apps' objects: %v", w)
	}
	if app := get(t, &syncv1.Application{}, ns, "web"); app.Status.DeployedRevision != webRev || app.Status.DesiredRevision != webRev {
		t.Errorf("web desired %s and deployed %s after previews, want %s", app.Status.DesiredRevision, app.Status.DeployedRevision, webRev)
	}
	if dep := get(t, &appsv1.Deployment{}, ns, "web"); !strings.Contains(fmt.Sprint(dep.Spec.Template.Spec.Containers), "web:1.0") {
		t.Errorf("Deployment web runs %v after previews, want web:1.0", dep.Spec.Template.Spec.Containers)
	}
}

// commented reports whether a comment on pull request number holds want:
// the comment follows the commit status.
func commented(host *githost.Host, number int, want string) bool {
	for _, c := range host.Comments(number) {
		if strings.Contains(c.Body, want) {
			return true
		}
	}
	return false
}

// onlyComment is the one comment on pull request number.
func onlyComment(t *testing.T, host *githost.Host, number int) githost.Comment {
	t.Helper()
	comments := host.Comments(number)
	if len(comments) != 1 {
		var bodies []string
		for _, c := range comments {
			bodies = append(bodies, c.Body)
		}
		t.Fatalf("%d comments on pull request %d, want one:\n%s", len(comments), number, strings.Join(bodies, "\n----\n"))
	}
	return comments[0]
}

// pullRequestHook sends GitHub's pull_request event, signed like pushHook's.
func pullRequestHook(t *testing.T, ns, name, url, action string, number int, head, headRepo string) (int, string) {
	t.Helper()
	body := []byte(fmt.Sprintf(`{"action":%q,"number":%d,"pull_request":{"number":%d,"head":{"sha":%q,"ref":"feature","repo":{"full_name":%q}},"base":{"ref":"main","repo":{"full_name":"acme/platform"}}},"repository":{"full_name":"acme/platform","clone_url":%q,"html_url":%q}}`,
		action, number, number, head, headRepo, url, strings.TrimSuffix(url, ".git")))
	mac := hmac.New(sha256.New, []byte(webhookToken))
	mac.Write(body)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost,
		"http://"+receiver(t)+"/hooks/"+ns+"/"+name, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "pull_request")
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// writeWatch records every write the API server reports, after it starts,
// to the Deployments, ConfigMaps and Secrets of a namespace: any change of
// a ConfigMap or Secret (but the desired-state Secrets of Revisions, which
// are Kuvryn Sync's own records), and any change of a Deployment's
// generation (its spec; kube-controller-manager's status writes do not
// count).
type writeWatch struct {
	mu     sync.Mutex
	writes []string
}

func (w *writeWatch) seen() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.writes...)
}

func (w *writeWatch) record(what string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes = append(w.writes, what)
}

func watchWrites(t *testing.T, ns string) *writeWatch {
	t.Helper()
	clientset, err := kubernetes.NewForConfig(env.CP.Config)
	if err != nil {
		t.Fatal(err)
	}
	w := &writeWatch{}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	deployments, err := clientset.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	generation := map[string]int64{}
	for _, d := range deployments.Items {
		generation[d.Name] = d.Generation
	}
	configMaps, err := clientset.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	secrets, err := clientset.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	watches := []struct {
		kind  string
		start func(string) (watch.Interface, error)
		rv    string
	}{
		{"Deployment", func(rv string) (watch.Interface, error) {
			return clientset.AppsV1().Deployments(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
		}, deployments.ResourceVersion},
		{"ConfigMap", func(rv string) (watch.Interface, error) {
			return clientset.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
		}, configMaps.ResourceVersion},
		{"Secret", func(rv string) (watch.Interface, error) {
			return clientset.CoreV1().Secrets(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
		}, secrets.ResourceVersion},
	}
	for _, wt := range watches {
		first, err := wt.start(wt.rv)
		if err != nil {
			t.Fatal(err)
		}
		go func(kind string, iface watch.Interface, start func(string) (watch.Interface, error), rv string) {
			for {
				for ev := range iface.ResultChan() {
					if ev.Type == watch.Error || ev.Type == watch.Bookmark {
						continue
					}
					obj, ok := ev.Object.(client.Object)
					if !ok {
						continue
					}
					rv = obj.GetResourceVersion()
					switch o := obj.(type) {
					case *corev1.Secret:
						if o.Type == syncv1.DesiredStateSecretType {
							continue
						}
					case *appsv1.Deployment:
						if ev.Type == watch.Modified && o.Generation == generation[o.Name] {
							continue
						}
					}
					w.record(fmt.Sprintf("%s %s %s", ev.Type, kind, obj.GetName()))
				}
				if ctx.Err() != nil {
					return
				}
				next, err := start(rv)
				if err != nil {
					return
				}
				iface = next
			}
		}(wt.kind, first, wt.start, wt.rv)
	}
	return w
}
