package controller_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	testregistry "github.com/kuvryn/kuvryn-sync/pkg/testkit/registry"
)

// The guide: a Repository re-reads its markers only when a policy's
// selected image changes. Reading markers means cloning the branch, so the
// test counts the clones the Git server serves, through a proxy in front of
// it, while something else makes the controller look at the Repository.
func TestRepository_ReReadsMarkersOnlyWhenASelectedImageChanges(t *testing.T) {
	ns := newNamespace(t)
	reg := testregistry.Start(t, testregistry.Options{})
	reg.Push(t, "acme/api", "1.0.0")
	image := reg.Host() + "/acme/api"
	repo, _ := gitRepository(t, ns, "app", "apps", map[string]string{
		"apps/values.yaml": "tag: '0.9.0' # {\"$imagepolicy\": \"" + ns + ":api:tag\"}\n",
	})
	clones, proxyURL := cloneCounter(t, repo.URL())
	r := repository(t, ns, "app")
	patch := client.MergeFrom(r.DeepCopy())
	r.Spec.Git.URL = proxyURL
	if err := k8s.Patch(t.Context(), r, patch); err != nil {
		t.Fatal(err)
	}
	create(t, semver(ns, "api", image, "1.x"))
	pushed := func() string {
		r := repository(t, ns, "app")
		c := condition(r.Status.Conditions, syncv1.ConditionImagesUpdated)
		if c.Status != metav1.ConditionTrue || c.ObservedGeneration != r.Generation || r.Status.ImageUpdate == nil {
			return ""
		}
		return r.Status.ImageUpdate.LastPushCommit
	}
	var first string
	eventually(t, "1.0.0 written back through the proxy", func() bool {
		first = pushed()
		return first != "" && clones.Load() > 0
	})

	before, reconciled := clones.Load(), reconciles(t)
	// A new policy that selects nothing changes no selected image, but its
	// creation makes the controller look at every Repository of the namespace.
	create(t, semver(ns, "idle", image, ">=5.0.0"))
	eventually(t, "the Repository reconciled after the new policy", func() bool { return reconciles(t) > reconciled })
	if n := clones.Load() - before; n != 0 {
		t.Errorf("the markers were read %d times without a change of selected image, want none", n)
	}

	reg.Push(t, "acme/api", "1.1.0")
	requestScan(t, policy(t, ns, "api"))
	eventually(t, "1.1.0 written back", func() bool { c := pushed(); return c != "" && c != first })
	if clones.Load() == before {
		t.Error("the write-back of 1.1.0 read no markers through the proxy")
	}
	if got := file(t, repo, "apps/values.yaml"); !strings.HasPrefix(got, "tag: '1.1.0' #") {
		t.Errorf("apps/values.yaml after 1.1.0:\n%s", got)
	}
}

// cloneCounter serves a proxy to the Git repository at repoURL and counts
// the fetches (clones included) made through it.
func cloneCounter(t *testing.T, repoURL string) (*atomic.Int64, string) {
	t.Helper()
	target, err := url.Parse(repoURL)
	if err != nil {
		t.Fatal(err)
	}
	path := target.Path
	target.Path = ""
	proxy := httputil.NewSingleHostReverseProxy(target)
	var fetches atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Query().Get("service") == "git-upload-pack" {
			fetches.Add(1)
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return &fetches, srv.URL + path
}

// reconciles reads controller_runtime_reconcile_total of the Repository
// write-back controller, all results together.
func reconciles(t *testing.T) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == "repository-image-update" {
					total += m.GetCounter().GetValue()
				}
			}
		}
	}
	return total
}
