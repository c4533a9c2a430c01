package controller_test

import (
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
)

// TestShard_DiscoveredApplicationsAndRevisionsFollowTheRepositorysShard
// labels a Repository into shard a: the Applications its .ksync.yaml
// declares carry shard a whatever the file says, their Revisions carry it
// too, and relabelling the Repository moves the Applications.
func TestShard_DiscoveredApplicationsAndRevisionsFollowTheRepositorysShard(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	// In shard a from the start: this suite's manager sees every shard, so
	// a Revision rendered before a relabel is not moved here (a sharded
	// source-controller moves it when it misses it in its cache, e2e).
	_, repo := newLabelledRepository(t, ns, "platform", map[string]string{
		".ksync.yaml": `applications:
  - metadata: {name: web, labels: {sync.kuvryn.io/shard: elsewhere, team: payments}}
    spec: {source: {path: apps/web}}
`,
		"apps/web/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {version: v1}\n",
	}, map[string]string{syncv1.ShardLabel: "a"})
	relabel := func(shard string) {
		t.Helper()
		current := get(t, &syncv1.Repository{}, ns, repo.Name)
		patch := client.MergeFrom(current.DeepCopy())
		if current.Labels == nil {
			current.Labels = map[string]string{}
		}
		current.Labels[syncv1.ShardLabel] = shard
		if err := k8s.Patch(t.Context(), current, patch); err != nil {
			t.Fatal(err)
		}
	}

	eventually(t, "Application web in shard a", func() bool {
		app := &syncv1.Application{}
		return k8s.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "web"}, app) == nil &&
			app.Labels[syncv1.ShardLabel] == "a" && app.Status.DesiredRevision != ""
	})
	app := get(t, &syncv1.Application{}, ns, "web")
	if app.Labels["team"] != "payments" {
		t.Errorf("labels of web: %v, want team=payments kept", app.Labels)
	}
	rev := get(t, &syncv1.Revision{}, ns, app.Status.DesiredRevision)
	if rev.Labels[syncv1.ShardLabel] != "a" {
		t.Errorf("Revision %s labels %v, want the Application's shard a", rev.Name, rev.Labels)
	}

	relabel("b")
	eventually(t, "Application web moved to shard b", func() bool {
		return get(t, &syncv1.Application{}, ns, "web").Labels[syncv1.ShardLabel] == "b"
	})
}
