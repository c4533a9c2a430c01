package packaging_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

const shardLabel = "sync.kuvryn.io/shard"

// controllers are the services that shard; the web service does not.
var controllers = []string{"source-controller", "sync-controller", "image-controller", "notify-controller"}

// shardCase is one rendering with shards: names gives the default
// Deployment's name of each enabled controller.
type shardCase struct {
	name, values string
	shards       []string
	names        map[string]string
	webhook      string
}

func chartNames(enabled map[string]bool) map[string]string {
	names := map[string]string{}
	for _, c := range controllers {
		if enabled[c] {
			names[c] = chartPrefix + serviceNamed(c).chartSuffix
		}
	}
	return names
}

// TestShards_ChartRendersADeploymentPerControllerPerShard renders the chart
// with shards and checks each enabled controller's Deployment per shard
// beside its default one, and that the API server accepts them.
func TestShards_ChartRendersADeploymentPerControllerPerShard(t *testing.T) {
	installPrerequisites(t)
	all := allServices()
	noImage := without(all, "image-controller")
	cases := []shardCase{
		{name: "two shards with every service", values: enabledValues(all) + "shards: [a, b]\n",
			shards: []string{"a", "b"}, names: chartNames(all), webhook: chartPrefix + "-webhook"},
		{name: "a shard of the enabled controllers only", values: enabledValues(noImage) + "shards: [tenant-1]\n",
			shards: []string{"tenant-1"}, names: chartNames(noImage), webhook: chartPrefix + "-webhook"},
		{name: "shards named like the services, whose Leases must not collide",
			values: "shards: [source, image, notify, web, controller-manager]\n",
			shards: []string{"source", "image", "notify", "web", "controller-manager"}, names: chartNames(all), webhook: chartPrefix + "-webhook"},
		{name: "shards of a sync-controller without webhook", values: "shards: [a]\nsyncController: {webhook: {enabled: false}}\n",
			shards: []string{"a"}, names: chartNames(all)},
		{name: "shards named like YAML numbers and booleans", values: "shards: [\"1\", \"yes\", \"off\"]\n",
			shards: []string{"1", "yes", "off"}, names: chartNames(all), webhook: chartPrefix + "-webhook"},
		{name: "shards without leader election", values: "shards: [a]\nleaderElection: false\n",
			shards: []string{"a"}, names: chartNames(all), webhook: chartPrefix + "-webhook"},
		{name: "no shards", values: "shards: []\n", names: chartNames(all), webhook: chartPrefix + "-webhook"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs := mustRenderChart(t, tc.values)
			checkShards(t, objs, tc)
			dryRunApply(t, "charts/kuvryn-sync", objs)
		})
	}
}

// TestShards_KustomizeComponentAddsAShardToDeployDefault builds the overlay
// of deploy/default that docs/install.md writes, with deploy/components/shard
// instantiated twice, and checks the same as for the chart; images set in the
// overlay move the shards' too.
func TestShards_KustomizeComponentAddsAShardToDeployDefault(t *testing.T) {
	installPrerequisites(t)
	names := map[string]string{}
	for _, c := range controllers {
		names[c] = serviceNamed(c).raw
	}
	cases := []struct {
		name, extra, registry string
	}{
		{name: "deploy/default's images", registry: "ghcr.io/kuvryn/"},
		{name: "images of the overlay", registry: "registry.example.com/", extra: `images:
  - {name: ghcr.io/kuvryn/kuvryn-sync-source, newName: registry.example.com/kuvryn-sync-source}
  - {name: ghcr.io/kuvryn/kuvryn-sync-sync, newName: registry.example.com/kuvryn-sync-sync}
  - {name: ghcr.io/kuvryn/kuvryn-sync-web, newName: registry.example.com/kuvryn-sync-web}
`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs := shardOverlay(t, []string{"a", "tenant-1", "1"}, tc.extra)
			objs, err := build(fs, overlayDir)
			if err != nil {
				t.Fatal(err)
			}
			checkShards(t, objs, shardCase{shards: []string{"a", "tenant-1", "1"}, names: names, webhook: "kuvryn-sync-webhook"})
			for _, o := range objs {
				if o.GetKind() == "ConfigMap" {
					t.Errorf("the overlay installs %s, the shard's local name", idOf(o))
				}
			}
			for _, d := range ofKind(objs, "Deployment") {
				image, _, _ := unstructured.NestedString(manager(t, d), "image")
				if !strings.HasPrefix(image, tc.registry+"kuvryn-sync-") {
					t.Errorf("%s runs %s, not from %s", idOf(d), image, tc.registry)
				}
			}
			dryRunApply(t, "an overlay of deploy/default with deploy/components/shard", objs)
		})
	}
}

// overlayDir is where docs/install.md puts the overlay with shards.
const overlayDir = "/deploy/overlays/production"

// shardOverlay writes docs/install.md's overlay of deploy/default, with one
// component per shard that names it and extra appended, beside a copy of
// deploy/ in memory.
func shardOverlay(t *testing.T, shards []string, extra string) filesys.FileSystem {
	t.Helper()
	fs := deployInMemory(t)
	var components []string
	for _, s := range shards {
		dir := filepath.Join(overlayDir, "shard-"+s)
		components = append(components, "shard-"+s)
		write(t, fs, filepath.Join(dir, "kustomization.yaml"), `apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
resources: [shard.yaml]
components: [../../../components/shard]
`)
		write(t, fs, filepath.Join(dir, "shard.yaml"), fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: kuvryn-sync-shard
  annotations: {config.kubernetes.io/local-config: "true"}
data: {name: %q}
`, s))
	}
	write(t, fs, filepath.Join(overlayDir, "kustomization.yaml"), fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [../../default]
components: [%s]
`, strings.Join(components, ", "))+extra)
	return fs
}

func write(t *testing.T, fs filesys.FileSystem, path, data string) {
	t.Helper()
	if err := fs.WriteFile(path, []byte(data)); err != nil {
		t.Fatal(err)
	}
}

// checkShards checks that each enabled controller runs its default
// Deployment and one <name>-shard-<shard> per shard: the same Pod but for
// --shard and a Lease of its own, under selectors that overlap no other
// Deployment's Pods, and that the webhook and metrics Services reach every
// shard's Pods.
func checkShards(t *testing.T, objs []*unstructured.Unstructured, tc shardCase) {
	t.Helper()
	leases := map[string]string{}
	for _, d := range ofKind(objs, "Deployment") {
		id := leaseID(t, d)
		if id == "" {
			continue
		}
		if other, ok := leases[id]; ok {
			t.Errorf("%s and Deployment %s share the Lease %s", idOf(d), other, id)
		}
		leases[id] = d.GetName()
	}

	sharded := 0
	for _, d := range ofKind(objs, "Deployment") {
		if _, ok := d.GetLabels()[shardLabel]; ok {
			sharded++
		}
	}
	if want := len(tc.shards) * len(tc.names); sharded != want {
		t.Errorf("%d shard Deployments, want %d (%d controllers × %d shards)", sharded, want, len(tc.names), len(tc.shards))
	}

	for c, name := range tc.names {
		d0 := find(objs, "Deployment", name)
		if d0 == nil {
			t.Errorf("no Deployment %s of the %s", name, c)
			continue
		}
		if arg := flagArg(t, d0, "--shard"); arg != "" {
			t.Errorf("%s, the default shard, has %s", idOf(d0), arg)
		}
		for _, s := range tc.shards {
			d := find(objs, "Deployment", name+"-shard-"+s)
			if d == nil {
				t.Errorf("no Deployment %s-shard-%s of the %s's shard %s", name, s, c, s)
				continue
			}
			checkShardDeployment(t, d0, d, s)
		}
	}
	for _, d := range ofKind(objs, "Deployment") {
		if d.GetLabels()["app.kubernetes.io/component"] == "web" && d.GetLabels()[shardLabel] != "" {
			t.Errorf("%s: the web service is not sharded", idOf(d))
		}
	}

	checkSelectorsOverlapNoOtherDeployment(t, objs)
	for c, name := range tc.names {
		checkServiceSelectsEveryShard(t, objs, name+"-metrics", c)
	}
	if tc.webhook != "" {
		checkServiceSelectsEveryShard(t, objs, tc.webhook, "sync-controller")
	}
}

// checkShardDeployment compares the shard's Deployment d with the default
// one, d0.
func checkShardDeployment(t *testing.T, d0, d *unstructured.Unstructured, shard string) {
	t.Helper()
	// The default's args with --shard and, when it elects, its own Lease; in
	// any order, which the flag parser ignores.
	wantArgs := slices.Clone(stringsAt(t, manager(t, d0), "args"))
	if lease := leaseID(t, d0); lease != "" {
		wantArgs[slices.Index(wantArgs, "--leader-election-id="+lease)] = "--leader-election-id=" + d.GetName()
		if leaseID(t, d) != d.GetName() {
			t.Errorf("%s: Lease %q, want its own name", idOf(d), leaseID(t, d))
		}
	}
	wantArgs = append(wantArgs, "--shard="+shard)
	got := slices.Clone(stringsAt(t, manager(t, d), "args"))
	slices.Sort(got)
	slices.Sort(wantArgs)
	if !slices.Equal(got, wantArgs) {
		t.Errorf("%s args\n%v\nwant\n%v", idOf(d), got, wantArgs)
	}
	for _, path := range [][]string{{"metadata", "labels"}, {"spec", "selector", "matchLabels"}, {"spec", "template", "metadata", "labels"}} {
		l, _, _ := unstructured.NestedStringMap(d.Object, path...)
		if l[shardLabel] != shard {
			t.Errorf("%s %s: %s=%q, want %q", idOf(d), strings.Join(path, "."), shardLabel, l[shardLabel], shard)
		}
	}
	if d.GetNamespace() != d0.GetNamespace() {
		t.Errorf("%s is not in %s's namespace", idOf(d), idOf(d0))
	}
	if d := firstDifference("Deployment", podWithoutArgs(d), podWithoutArgs(d0)); d != "" {
		t.Errorf("shard %s's Deployment differs from %s beyond its args and labels: %s", shard, idOf(d0), d)
	}
}

// podWithoutArgs is a Deployment's spec but for its Pod labels, selector and
// args, which the shard sets.
func podWithoutArgs(d *unstructured.Unstructured) any {
	spec, _, _ := unstructured.NestedMap(runtime.DeepCopyJSON(d.Object), "spec")
	unstructured.RemoveNestedField(spec, "selector")
	unstructured.RemoveNestedField(spec, "template", "metadata", "labels")
	containers, _, _ := unstructured.NestedSlice(spec, "template", "spec", "containers")
	for _, c := range containers {
		delete(c.(map[string]any), "args")
	}
	_ = unstructured.SetNestedSlice(spec, containers, "template", "spec", "containers")
	return spec
}

func leaseID(t *testing.T, d *unstructured.Unstructured) string {
	t.Helper()
	_, id, _ := strings.Cut(flagArg(t, d, "--leader-election-id"), "=")
	return id
}

// flagArg returns the manager's argument setting flag, or "".
func flagArg(t *testing.T, d *unstructured.Unstructured, flag string) string {
	t.Helper()
	for _, a := range stringsAt(t, manager(t, d), "args") {
		if strings.HasPrefix(a, flag+"=") {
			return a
		}
	}
	return ""
}

func podLabels(d *unstructured.Unstructured) labels.Set {
	l, _, _ := unstructured.NestedStringMap(d.Object, "spec", "template", "metadata", "labels")
	return l
}

// checkSelectorsOverlapNoOtherDeployment fails when a Deployment's selector
// matches another's Pods, which Kubernetes forbids (kubectl logs
// deployment/<name> would show another shard's Pod).
func checkSelectorsOverlapNoOtherDeployment(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	deployments := ofKind(objs, "Deployment")
	for _, d := range deployments {
		m, _, _ := unstructured.NestedStringMap(d.Object, "spec", "selector", "matchLabels")
		sel, err := metav1.LabelSelectorAsSelector(&metav1.LabelSelector{MatchLabels: m})
		if err != nil {
			t.Fatalf("%s selector: %v", idOf(d), err)
		}
		for _, other := range deployments {
			matches := sel.Matches(podLabels(other))
			if other == d && !matches {
				t.Errorf("%s does not select its own Pods", idOf(d))
			}
			if other != d && matches {
				t.Errorf("%s selects the Pods of %s", idOf(d), idOf(other))
			}
		}
	}
}

// checkServiceSelectsEveryShard fails unless the Service selects the Pods
// of every Deployment of the component, default and shards, and no other.
func checkServiceSelectsEveryShard(t *testing.T, objs []*unstructured.Unstructured, service, component string) {
	t.Helper()
	svc := find(objs, "Service", service)
	if svc == nil {
		t.Errorf("no Service %s", service)
		return
	}
	m, _, _ := unstructured.NestedStringMap(svc.Object, "spec", "selector")
	sel := labels.SelectorFromSet(m)
	for _, d := range ofKind(objs, "Deployment") {
		mine := d.GetLabels()["app.kubernetes.io/component"] == component
		if got := sel.Matches(podLabels(d)); got != mine {
			t.Errorf("Service %s selects the Pods of %s: %t, want %t", service, idOf(d), got, mine)
		}
	}
}

// TestShards_ChartRefusesBadShardNames renders the chart with shard names
// that cannot be a label value and part of Deployment names, or that repeat.
func TestShards_ChartRefusesBadShardNames(t *testing.T) {
	checkRefused(t, []refusedValues{
		{"an empty name, the default shard", "shards: [a, \"\"]\n", "shards: an empty name is the default shard"},
		{"a name listed twice", "shards: [a, b, a]\n", `shards: "a" is listed twice`},
		{"upper case, a label value but not a name", "shards: [TenantA]\n", `shards: "TenantA" is not a shard name`},
		{"an underscore", "shards: [tenant_a]\n", `shards: "tenant_a" is not a shard name`},
		{"a trailing dash", "shards: [a-]\n", `shards: "a-" is not a shard name`},
		{"longer than a label value", "shards: [" + strings.Repeat("a", 64) + "]\n", "is not a shard name: use at most 63"},
		{"a number", "shards: [1]\n", "shards: 1 is not a shard name: write each name as a string"},
		{"not a list", "shards: a\n", "shards"},
	})
	t.Run("the longest name is accepted", func(t *testing.T) {
		if _, err := renderChart(t, "shards: ["+strings.Repeat("a", 63)+"]\n"); err != nil {
			t.Fatal(err)
		}
	})
}
