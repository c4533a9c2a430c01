package receiver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// annotate sets (or, for nil, removes) annotations of Repository name as
// admin, and waits until the receiver's cache has seen the change.
func (f *fixture) annotate(name string, annotations map[string]*string) {
	f.t.Helper()
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	must(f.t, err)
	repo := &syncv1.Repository{}
	repo.Namespace, repo.Name = f.ns, name
	must(f.t, admin.Patch(context.Background(), repo, client.RawPatch(types.MergePatchType, patch)))
	deadline := time.Now().Add(30 * time.Second)
	for cached := (&syncv1.Repository{}); ; time.Sleep(10 * time.Millisecond) {
		must(f.t, f.rc.client.Get(context.Background(), client.ObjectKeyFromObject(repo), cached))
		if cached.ResourceVersion == repo.ResourceVersion {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("Repository %s never reached the receiver's cache at resourceVersion %s", name, repo.ResourceVersion)
		}
	}
}

// request is a preview request annotation's value.
func request(t testing.TB, r syncv1.PreviewRequest) *string {
	t.Helper()
	v, err := syncv1.MarshalPreviewRequest(r)
	must(t, err)
	return &v
}

// TestReceiver_PreviewRequestsAreBounded stamps pull requests on
// Repositories already holding preview requests: the stamp removes the
// pull and merge requests closed longer than spec.previews.keepAfterClose
// ago (1h by default) and keeps the rest; with 100 preview requests held,
// a new one is refused as too_many_previews and nothing changes, while a
// held one is still updated, and a new one fits once a held one has
// expired.
func TestReceiver_PreviewRequestsAreBounded(t *testing.T) {
	clock := &steppedClock{t: time.Date(2026, 12, 7, 18, 0, 0, 0, time.UTC)}
	f := start(t, fixtureOptions{now: clock.now})
	f.secret("hook", "s3cret")
	f.previewRepository("half-hour", "https://github.com/acme/platform", "hook",
		&syncv1.PreviewsSpec{PullRequests: syncv1.PreviewProviderGitHub, KeepAfterClose: &metav1.Duration{Duration: 30 * time.Minute}})
	f.previewRepository("default", "https://github.com/acme/platform", "hook", &syncv1.PreviewsSpec{PullRequests: syncv1.PreviewProviderGitHub})
	f.previewRepository("full", "https://github.com/acme/platform", "hook", &syncv1.PreviewsSpec{PullRequests: syncv1.PreviewProviderGitHub})

	opened := func(repo string, n int, sha string) response {
		t.Helper()
		clock.add(11 * time.Second)
		body := githubPullRequest("acme/platform", "opened", n, sha, "acme/platform")
		return f.post("/hooks/"+f.ns+"/"+repo, map[string]string{"X-GitHub-Event": "pull_request", "X-Hub-Signature-256": sign(body, "s3cret")}, body)
	}
	closedAgo := func(n int32, ago time.Duration) *string {
		return request(t, syncv1.PreviewRequest{Number: n, Commit: commitA, Closed: true, At: metav1.NewTime(clock.now().Add(-ago))})
	}
	openAgo := func(n int32, ago time.Duration) *string {
		return request(t, syncv1.PreviewRequest{Number: n, Commit: commitA, At: metav1.NewTime(clock.now().Add(-ago))})
	}
	branch := "preview/x"
	garbage := "not a request"

	t.Run("closed requests older than keepAfterClose are removed", func(t *testing.T) {
		cases := []struct {
			repo    string
			held    map[string]*string
			removed []string
		}{
			{"half-hour", map[string]*string{
				"preview.sync.kuvryn.io/pr-1": closedAgo(1, 31*time.Minute),
				"preview.sync.kuvryn.io/mr-5": closedAgo(5, 2*time.Hour),
				"preview.sync.kuvryn.io/pr-2": closedAgo(2, 29*time.Minute),
				"preview.sync.kuvryn.io/pr-3": openAgo(3, 48*time.Hour),
				"preview.sync.kuvryn.io/pr-9": &garbage,
				syncv1.PreviewRequestAnnotation(syncv1.BranchPreviewName(branch)): request(t, syncv1.PreviewRequest{
					Branch: branch, Closed: true, At: metav1.NewTime(clock.now().Add(-48 * time.Hour))}),
				"team": &garbage,
			}, []string{"preview.sync.kuvryn.io/pr-1", "preview.sync.kuvryn.io/mr-5"}},
			{"default", map[string]*string{
				"preview.sync.kuvryn.io/pr-1": closedAgo(1, 61*time.Minute),
				"preview.sync.kuvryn.io/pr-2": closedAgo(2, 59*time.Minute),
			}, []string{"preview.sync.kuvryn.io/pr-1"}},
		}
		for _, c := range cases {
			f.annotate(c.repo, c.held)
			if got := opened(c.repo, 20, commitB); got.status != http.StatusAccepted {
				t.Fatalf("%s: %d %q, want 202", c.repo, got.status, got.body)
			}
			repo := &syncv1.Repository{}
			must(t, admin.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: c.repo}, repo))
			want := map[string]string{}
			for k, v := range c.held {
				want[k] = *v
			}
			for _, k := range c.removed {
				delete(want, k)
			}
			for k, v := range want {
				if repo.Annotations[k] != v {
					t.Errorf("%s: annotation %s = %q, want %q kept", c.repo, k, repo.Annotations[k], v)
				}
			}
			for _, k := range c.removed {
				if v, ok := repo.Annotations[k]; ok {
					t.Errorf("%s: annotation %s = %q, want it removed", c.repo, k, v)
				}
			}
			if _, ok := repo.Annotations["preview.sync.kuvryn.io/pr-20"]; !ok {
				t.Errorf("%s: pr-20 not stamped: %v", c.repo, repo.Annotations)
			}
		}
	})

	t.Run("at most 100 preview requests", func(t *testing.T) {
		held := map[string]*string{}
		for n := int32(1); n <= MaxPreviewRequests; n++ {
			held[fmt.Sprintf("preview.sync.kuvryn.io/pr-%d", n)] = openAgo(n, time.Minute)
		}
		f.annotate("full", held)
		before := f.snapshot()["Repository/full"]
		if got := opened("full", 500, commitB); got.status != http.StatusUnprocessableEntity ||
			got.body != "too_many_previews: the Repository already holds 100 preview requests\n" {
			t.Fatalf("101st request: %d %q, want 422 too_many_previews", got.status, got.body)
		}
		if after := f.snapshot()["Repository/full"]; after.resourceVersion != before.resourceVersion {
			t.Fatalf("the refused request changed the Repository: %v", after.annotations)
		}
		if c := f.counts(); c["bad_request"] != 1 || c["too_many_previews"] != 0 {
			t.Fatalf("counts %v, want bad_request 1: the guide's result values only", c)
		}
		if got := opened("full", 100, commitB); got.status != http.StatusAccepted {
			t.Fatalf("a held request's update: %d %q, want 202", got.status, got.body)
		}
		if got := f.previewRequests("full")["pr-100"]; got.Commit != commitB {
			t.Fatalf("pr-100 = %+v, want commit %s", got, commitB)
		}
		f.annotate("full", map[string]*string{"preview.sync.kuvryn.io/pr-7": closedAgo(7, 2*time.Hour)})
		if got := opened("full", 500, commitB); got.status != http.StatusAccepted {
			t.Fatalf("a new request once one expired: %d %q, want 202", got.status, got.body)
		}
		got := f.previewRequests("full")
		if _, ok := got["pr-7"]; ok || len(got) != MaxPreviewRequests || got["pr-500"].Commit != commitB {
			t.Fatalf("%d requests, pr-7 %+v, pr-500 %+v; want 100, pr-7 removed, pr-500 stamped", len(got), got["pr-7"], got["pr-500"])
		}
	})
}
