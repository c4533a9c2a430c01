package scenarios_test

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/e2e/harness"
)

// shardApps is how many Applications each of the scenario's three
// Repositories declares.
const shardApps = 10

// TestE2E_ShardsReconcileOnlyTheirObjectsAndHandOverAMovedRepository runs
// two shards, a and b, beside the default one: 3 Repositories, one per
// shard, declare 30 Applications, which inherit their Repository's shard.
// Each shard's processes reconcile only their own objects (their logs and
// metrics say so). A SIGKILL of shard a's sync-controller, while one of its
// Applications waits mid-rollout in a gated wave, stops no rollout in shard b
// or the default one. Moving shard a's Repository to shard b hands its
// Applications over: shard b finishes the interrupted rollout from its
// status, each hook Job created once.
func TestE2E_ShardsReconcileOnlyTheirObjectsAndHandOverAMovedRepository(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-shards")
	gate := "gate.e2e.kuvryn.io/" + ns
	clientset, err := kubernetes.NewForConfig(env.CP.Config)
	if err != nil {
		t.Fatal(err)
	}
	jobs := watchJobCreations(t, clientset, ns)
	shards := map[string]*harness.Shard{}
	for _, name := range []string{"a", "b"} {
		s, err := env.StartShard(t.Context(), name, services.Sink)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Stop)
		shards[name] = s
	}

	// alpha (shard a) also declares shop: a pre-sync hook, a wave that
	// cannot schedule until the gate opens, and a post-sync hook.
	alphaFiles := shardRepository("alpha", "v1")
	alphaFiles[".ksync.yaml"] += `  - metadata: {name: shop}
    spec:
      source: {path: shop}
      serviceAccountName: deployer
      sync: {automatic: true}
`
	alphaFiles["shop/migrate.yaml"] = hookJob("migrate", "pre-sync")
	alphaFiles["shop/smoke.yaml"] = hookJob("smoke", "post-sync")
	alphaFiles["shop/api.yaml"] = waveDeployment("api", "1", gate)
	labelledRepository(t, env.Git, ns, "alpha", alphaFiles, 5*time.Second, map[string]string{syncv1.ShardLabel: "a"})
	beta := labelledRepository(t, env.Git, ns, "beta", shardRepository("beta", "v1"), 5*time.Second, map[string]string{syncv1.ShardLabel: "b"})
	dflt := labelledRepository(t, env.Git, ns, "dflt", shardRepository("dflt", "v1"), 5*time.Second, nil)

	first := map[string]string{}
	for _, prefix := range []string{"alpha", "beta", "dflt"} {
		for i := range shardApps {
			name := fmt.Sprintf("%s-%d", prefix, i)
			first[name] = waitHealthy(t, ns, name, "")
		}
	}
	for name, rev := range first {
		want := map[string]string{"alpha": "a", "beta": "b"}[strings.Split(name, "-")[0]]
		app := get(t, &syncv1.Application{}, ns, name)
		r := get(t, &syncv1.Revision{}, ns, rev)
		if app.Labels[syncv1.ShardLabel] != want || r.Labels[syncv1.ShardLabel] != want {
			t.Errorf("Application %s in shard %q and its Revision %s in %q, want %q",
				name, app.Labels[syncv1.ShardLabel], rev, r.Labels[syncv1.ShardLabel], want)
		}
	}
	for shard, own := range map[string]string{"a": "alpha-", "b": "beta-"} {
		for _, p := range shards[shard].All() {
			if ok, err := p.Logged(own); p != shards[shard].Notify && (err != nil || !ok) {
				t.Errorf("shard %s's %s logged nothing of its Applications %s*: %v", shard, p.Name, own, err)
			}
			for _, other := range []string{"alpha-", "beta-", "dflt-"} {
				if other == own {
					continue
				}
				if ok, err := p.Logged(`"` + other); err != nil || ok {
					t.Errorf("shard %s's %s logged an Application %s* of another shard (%v)", shard, p.Name, other, err)
				}
			}
			checkShardMetrics(t, shard, p, shards[shard].Metrics[p])
		}
	}

	rev := waitInFirstWave(t, ns, "shop", "migrate", 1)
	shards["a"].Sync.Kill()

	for _, r := range []struct {
		prefix string
		git    interface {
			Commit(map[string]string, string) (string, error)
		}
	}{{"beta", beta}, {"dflt", dflt}} {
		if _, err := r.git.Commit(shardRepository(r.prefix, "v2"), "v2"); err != nil {
			t.Fatal(err)
		}
	}
	for _, prefix := range []string{"beta", "dflt"} {
		for i := range shardApps {
			name := fmt.Sprintf("%s-%d", prefix, i)
			waitHealthy(t, ns, name, first[name])
		}
	}

	moveRepository(t, ns, "alpha", "b")
	eventually(t, 2*time.Minute, "alpha's Applications and shop's Revision moved to shard b", func() bool {
		var list syncv1.ApplicationList
		if err := env.Client.List(t.Context(), &list, client.InNamespace(ns), client.MatchingLabels{syncv1.RepositoryLabel: "alpha"}); err != nil {
			return false
		}
		for _, app := range list.Items {
			if app.Labels[syncv1.ShardLabel] != "b" {
				return false
			}
		}
		r := &syncv1.Revision{}
		return len(list.Items) == shardApps+1 && env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: rev.Name}, r) == nil &&
			r.Labels[syncv1.ShardLabel] == "b"
	})
	openGate(t, gate)
	if healthy := waitHealthy(t, ns, "shop", ""); healthy != rev.Name {
		t.Fatalf("shop deployed %s, want the Revision %s that was rolling out in shard a", healthy, rev.Name)
	}
	done := get(t, &syncv1.Revision{}, ns, rev.Name)
	if done.Status.Attempt != 1 {
		t.Errorf("attempt %d, want shard b to finish shard a's attempt 1", done.Status.Attempt)
	}
	if got := hookState(done, "smoke"); got != syncv1.HookSucceeded {
		t.Errorf("post-sync hook smoke is %q, want Succeeded", got)
	}
	for _, hook := range []string{"migrate", "smoke"} {
		if n := jobs.created()[hook]; n != 1 {
			t.Errorf("hook Job %s was created %d times, want once", hook, n)
		}
	}
	if ok, err := shards["b"].Sync.Logged(`"shop"`); err != nil || !ok {
		t.Errorf("shard b's sync-controller logged nothing of shop after the move: %v", err)
	}
}

// shardRepository declares shardApps Applications named <prefix>-<i>, each
// a ConfigMap at version.
func shardRepository(prefix, version string) map[string]string {
	files := map[string]string{}
	var decl strings.Builder
	decl.WriteString("applications:\n")
	for i := range shardApps {
		name := fmt.Sprintf("%s-%d", prefix, i)
		fmt.Fprintf(&decl, `  - metadata: {name: %[1]s}
    spec:
      source: {path: apps/%[1]s}
      serviceAccountName: deployer
      sync: {automatic: true}
`, name)
		files["apps/"+name+"/configmap.yaml"] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\ndata: {version: %s}\n", name, version)
	}
	files[".ksync.yaml"] = decl.String()
	return files
}

// moveRepository relabels a Repository into shard.
func moveRepository(t *testing.T, ns, name, shard string) {
	t.Helper()
	repo := get(t, &syncv1.Repository{}, ns, name)
	patch := client.MergeFrom(repo.DeepCopy())
	repo.Labels[syncv1.ShardLabel] = shard
	if err := env.Client.Patch(t.Context(), repo, patch); err != nil {
		t.Fatal(err)
	}
}

// checkShardMetrics reads a shard process's metrics: every reconcile and
// API request it counts carries shard="<shard>", and it reconciled and
// requested something.
func checkShardMetrics(t *testing.T, shard string, p *harness.Process, addr string) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Errorf("%s of shard %s: %v", p.Name, shard, err)
		return
	}
	defer resp.Body.Close()
	sums := map[string]float64{}
	scanner := bufio.NewScanner(resp.Body)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		line := scanner.Text()
		for _, metric := range []string{"controller_runtime_reconcile_total{", "rest_client_requests_total{"} {
			if !strings.HasPrefix(line, metric) {
				continue
			}
			if !strings.Contains(line, `shard="`+shard+`"`) {
				t.Errorf("%s of shard %s exports %s without its shard", p.Name, shard, line)
			}
			v, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
			if err == nil {
				sums[metric] += v
			}
		}
	}
	for _, metric := range []string{"controller_runtime_reconcile_total{", "rest_client_requests_total{"} {
		if sums[metric] == 0 {
			t.Errorf("%s of shard %s counts no %s}", p.Name, shard, metric)
		}
	}
}
