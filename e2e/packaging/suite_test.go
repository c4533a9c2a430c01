// Package packaging proves that what Kuvryn Sync ships for installation is
// accepted by a real API server: the kustomize manifests in deploy/default
// and the Helm chart in charts/kuvryn-sync, rendered with each service on
// and off, are Server-Side Applied (CRDs and the Namespace for real, the rest
// as a dry run), their Pods pass the restricted Pod Security Standard, the
// chart renders the same objects as deploy/default, every flag the manifests
// pass is one the service binaries accept, and each image's Dockerfile builds
// the binaries its Deployments run. The images are not built: there is no
// container engine here.
package packaging_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/kuvryn/kuvryn-sync/pkg/testkit/controlplane"
)

const (
	systemNamespace = "kuvryn-sync-system"
	fieldManager    = "kuvryn-packaging-test"
	// releaseName is not the chart's name, so that a name the chart fixes
	// instead of deriving from the release shows.
	releaseName = "edge"
	// chartPrefix is what the guide calls <release>-kuvryn-sync.
	chartPrefix = releaseName + "-kuvryn-sync"
)

// service is one deployable: raw names its Deployment and ServiceAccount in
// deploy/default, chartSuffix follows <release>-kuvryn-sync in the chart's
// names, and key is its block in the chart's values.
type service struct{ name, key, raw, chartSuffix string }

// services spell the names as the operations guide prints them.
var services = []service{
	{"source-controller", "sourceController", "kuvryn-sync-source-controller", "-source"},
	{"sync-controller", "syncController", "kuvryn-sync-controller-manager", ""},
	{"image-controller", "imageController", "kuvryn-sync-image-controller", "-image"},
	{"notify-controller", "notifyController", "kuvryn-sync-notify-controller", "-notify"},
	{"web", "web", "kuvryn-sync-web", "-web"},
}

func serviceNamed(name string) service {
	for _, s := range services {
		if s.name == name {
			return s
		}
	}
	panic("no service " + name)
}

// rawNames maps each name the chart renders for the release to the name
// deploy/default gives the same object.
func rawNames() map[string]string {
	m := map[string]string{
		chartPrefix + "-common":                "kuvryn-sync-common",
		chartPrefix + "-webhook":               "kuvryn-sync-webhook",
		chartPrefix + "-webhook-cert":          "kuvryn-sync-webhook-cert",
		chartPrefix + "-application":           "kuvryn-sync-application",
		chartPrefix + "-receiver":              "kuvryn-sync-receiver",
		chartPrefix + "-console":               "kuvryn-sync-console",
		chartPrefix + "-web-console":           "kuvryn-sync-web-console",
		chartPrefix + "-viewer":                "kuvryn-sync-viewer",
		chartPrefix + "-web-stamps-only":       "kuvryn-sync-web-stamps-only",
		chartPrefix + "-web-receiver-replicas": "kuvryn-sync-web-receiver-replicas",
		// The console's session-key Secret, named after its Deployment.
		chartPrefix + "-web-console-session": "kuvryn-sync-web-console-session",
	}
	for _, s := range services {
		m[chartPrefix+s.chartSuffix] = s.raw
		m[chartPrefix+s.chartSuffix+"-metrics"] = s.raw + "-metrics"
	}
	return m
}

// asDeployDefault renames a chart rendering's objects, and every reference
// between them, to deploy/default's names, and drops the release from
// selectors, so the two can be compared object for object.
func asDeployDefault(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	names := rawNames()
	var rename func(v any) any
	rename = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			delete(v, "app.kubernetes.io/instance")
			for k, e := range v {
				v[k] = rename(e)
			}
		case []any:
			for i, e := range v {
				v[i] = rename(e)
			}
		case string:
			if raw, ok := names[v]; ok {
				return raw
			}
			// A flag naming an object, such as --leader-election-id=<name>
			// or --console-session-secret=<namespace>/<name>.
			if flag, value, ok := strings.Cut(v, "="); ok && strings.HasPrefix(flag, "--") {
				ns, name, namespaced := strings.Cut(value, "/")
				if !namespaced {
					ns, name = "", value
				}
				if raw, ok := names[name]; ok {
					if namespaced {
						raw = ns + "/" + raw
					}
					return flag + "=" + raw
				}
			}
		}
		return v
	}
	out := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		out[i] = &unstructured.Unstructured{Object: rename(runtime.DeepCopyJSON(o.Object)).(map[string]any)}
	}
	return out
}

var (
	k8s         client.Client
	root        string
	kubeVersion chartutil.KubeVersion
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	if root, err = controlplane.RepoRoot(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// No CRDs up front: the tests install the ones deploy/default ships, so
	// those are what the API server has to accept. Full: kwok runs the Pods
	// of the chart installed for real.
	cp, err := controlplane.Start(ctx, controlplane.Options{CRDDir: "-", Full: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting control plane:", err)
		return 1
	}
	defer func() { _ = cp.Stop() }()
	if k8s, err = client.New(cp.Config, client.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cp.Config)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	v, err := dc.ServerVersion()
	if err != nil {
		fmt.Fprintln(os.Stderr, "server version:", err)
		return 1
	}
	// The chart's kubeVersion constraint is checked against the real server.
	kubeVersion = chartutil.KubeVersion{Version: v.GitVersion, Major: v.Major, Minor: v.Minor}
	return m.Run()
}

// id names one object the way a failure message should.
type id struct{ kind, namespace, name string }

func (i id) String() string {
	if i.namespace == "" {
		return i.kind + " " + i.name
	}
	return i.kind + " " + i.namespace + "/" + i.name
}

func idOf(o *unstructured.Unstructured) id {
	return id{o.GetKind(), o.GetNamespace(), o.GetName()}
}

func ids(objs []*unstructured.Unstructured) map[id]bool {
	set := map[id]bool{}
	for _, o := range objs {
		set[idOf(o)] = true
	}
	return set
}

// parseYAML decodes a multi-document YAML stream; both builds go through it,
// so their numbers and maps have the same Go types.
func parseYAML(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, err
		}
		if len(u.Object) == 0 {
			continue
		}
		objs = append(objs, u)
	}
}

// buildKustomization runs kustomize on a directory of the repository, as
// `kustomize build deploy/<dir>` does.
func buildKustomization(dir string) ([]*unstructured.Unstructured, error) {
	return build(filesys.MakeFsOnDisk(), filepath.Join(root, dir))
}

func build(fs filesys.FileSystem, dir string) ([]*unstructured.Unstructured, error) {
	rm, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fs, dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	data, err := rm.AsYaml()
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	objs, err := parseYAML(data)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	return objs, nil
}

// deployInMemory copies deploy/ to /deploy on an in-memory filesystem, for
// builds of what a user would edit or add.
func deployInMemory(t *testing.T) filesys.FileSystem {
	t.Helper()
	fs := filesys.MakeFsInMemory()
	deploy := filepath.Join(root, "deploy")
	err := filepath.WalkDir(deploy, func(path string, d iofs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(deploy, path)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return fs.WriteFile(filepath.Join("/deploy", rel), data)
	})
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func deployDefault(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	objs, err := buildKustomization(filepath.Join("deploy", "default"))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	c, err := loader.Load(filepath.Join(root, "charts", "kuvryn-sync"))
	if err != nil {
		t.Fatalf("loading charts/kuvryn-sync: %v", err)
	}
	return c
}

// renderChart renders charts/kuvryn-sync as `helm install --dry-run` would,
// with values given as a values file, as the release releaseName in
// systemNamespace.
func renderChart(t *testing.T, values string) ([]*unstructured.Unstructured, error) {
	t.Helper()
	return renderChartAs(t, releaseName, values)
}

func mustRenderChartAs(t *testing.T, release, values string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := renderChartAs(t, release, values)
	if err != nil {
		t.Fatalf("rendering charts/kuvryn-sync as %s with values\n%s: %v", release, values, err)
	}
	return objs
}

func renderChartAs(t *testing.T, release, values string) ([]*unstructured.Unstructured, error) {
	t.Helper()
	vals, err := chartutil.ReadValues([]byte(values))
	if err != nil {
		t.Fatalf("test values: %v", err)
	}
	install := action.NewInstall(&action.Configuration{Log: func(string, ...any) {}})
	install.DryRun = true
	install.ClientOnly = true
	install.ReleaseName = release
	install.Namespace = systemNamespace
	install.KubeVersion = &kubeVersion
	rel, err := install.Run(loadChart(t), vals)
	if err != nil {
		return nil, err
	}
	objs, err := parseYAML([]byte(rel.Manifest))
	if err != nil {
		return nil, fmt.Errorf("rendered manifest: %w", err)
	}
	return objs, nil
}

func mustRenderChart(t *testing.T, values string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := renderChart(t, values)
	if err != nil {
		t.Fatalf("rendering charts/kuvryn-sync with values\n%s: %v", values, err)
	}
	return objs
}

func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

func ofKind(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

var (
	installOnce sync.Once
	installErr  error
)

// installPrerequisites applies for real, from deploy/default, what dry runs
// of the other objects depend on: the CRDs (until Established) and the
// Namespace, which carries the Pod Security labels.
func installPrerequisites(t *testing.T) {
	t.Helper()
	installOnce.Do(func() { installErr = install(context.Background()) })
	if installErr != nil {
		t.Fatalf("installing the CRDs and Namespace of deploy/default: %v", installErr)
	}
}

func install(ctx context.Context) error {
	objs, err := buildKustomization(filepath.Join("deploy", "default"))
	if err != nil {
		return err
	}
	var crds []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() != "CustomResourceDefinition" && o.GetKind() != "Namespace" {
			continue
		}
		if err := k8s.Apply(ctx, client.ApplyConfigurationFromUnstructured(o.DeepCopy()),
			client.FieldOwner(fieldManager), client.ForceOwnership); err != nil {
			return fmt.Errorf("%s: %w", idOf(o), err)
		}
		if o.GetKind() == "CustomResourceDefinition" {
			crds = append(crds, o)
		}
	}
	for _, crd := range crds {
		if err := waitEstablished(ctx, crd.GetName()); err != nil {
			return err
		}
	}
	return nil
}

func waitEstablished(ctx context.Context, name string) error {
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		crd := &unstructured.Unstructured{}
		crd.SetAPIVersion("apiextensions.k8s.io/v1")
		crd.SetKind("CustomResourceDefinition")
		if err := k8s.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
		for _, c := range conds {
			c, _ := c.(map[string]any)
			if c["type"] == "Established" && c["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("CustomResourceDefinition %s not Established: %w", name, err)
	}
	return nil
}

// dryRunApply Server-Side Applies every object with dryRun=All and reports
// each refusal with the object's kind, namespace and name.
func dryRunApply(t *testing.T, source string, objs []*unstructured.Unstructured) {
	t.Helper()
	if len(objs) == 0 {
		t.Fatalf("%s: no objects to apply", source)
	}
	for _, o := range objs {
		err := k8s.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(o.DeepCopy()),
			client.FieldOwner(fieldManager), client.ForceOwnership, client.DryRunAll)
		if err != nil {
			t.Errorf("%s: %s refused by the API server: %v", source, idOf(o), err)
		}
	}
}

// ownedBy names the deploy/default objects that exist only for one service.
// Everything else (the CRDs, the Namespace, the common ClusterRole and its
// binding) is shared.
func ownedBy(svc string) []id {
	raw := serviceNamed(svc).raw
	owned := []id{
		{"Deployment", systemNamespace, raw},
		{"Service", systemNamespace, raw + "-metrics"},
		{"ServiceAccount", systemNamespace, raw},
	}
	switch svc {
	case "source-controller", "sync-controller", "web", "image-controller", "notify-controller":
		owned = append(owned,
			id{"ClusterRole", "", raw},
			id{"ClusterRoleBinding", "", raw})
	}
	if svc == "sync-controller" {
		owned = append(owned, webhookObjects...)
	}
	// The console's session-key Role and the viewer ClusterRole for the
	// people who sign in to it; the receiver's Role to count its replicas
	// and the policy holding it to its annotations.
	if svc == "web" {
		owned = append(owned,
			id{"Role", systemNamespace, "kuvryn-sync-web-console"},
			id{"RoleBinding", systemNamespace, "kuvryn-sync-web-console"},
			id{"Role", systemNamespace, "kuvryn-sync-web-receiver-replicas"},
			id{"RoleBinding", systemNamespace, "kuvryn-sync-web-receiver-replicas"},
			id{"ClusterRole", "", "kuvryn-sync-viewer"},
			id{"ValidatingAdmissionPolicy", "", raw + "-stamps-only"},
			id{"ValidatingAdmissionPolicyBinding", "", raw + "-stamps-only"})
	}
	return owned
}

// webhookObjects exist while the sync-controller serves its admission
// webhook; the configurations fail closed, so never without it.
var webhookObjects = []id{
	{"Service", systemNamespace, "kuvryn-sync-webhook"},
	{"MutatingWebhookConfiguration", "", "kuvryn-sync-application"},
	{"ValidatingWebhookConfiguration", "", "kuvryn-sync-application"},
}

var commonRBAC = []id{
	{"ClusterRole", "", "kuvryn-sync-common"},
	{"ClusterRoleBinding", "", "kuvryn-sync-common"},
}

// expectedChartObjects is what the chart must render for the enabled
// services: the objects of deploy/default, less the Namespace (Helm installs
// into an existing one, or with --create-namespace), the CRDs (in the chart's
// crds/, compared on their own) and the objects of disabled services.
func expectedChartObjects(kustomized []*unstructured.Unstructured, enabled map[string]bool, webhook bool) map[id]bool {
	want := map[id]bool{}
	for _, o := range kustomized {
		if o.GetKind() != "Namespace" && o.GetKind() != "CustomResourceDefinition" {
			want[idOf(o)] = true
		}
	}
	anyEnabled := false
	for _, s := range services {
		if enabled[s.name] {
			anyEnabled = true
			continue
		}
		for _, i := range ownedBy(s.name) {
			delete(want, i)
		}
	}
	if !webhook {
		for _, i := range webhookObjects {
			delete(want, i)
		}
	}
	if !anyEnabled {
		for _, i := range commonRBAC {
			delete(want, i)
		}
	}
	return want
}

// diffIDs reports the objects of want missing from got and those got has
// beyond want.
func diffIDs(got, want map[id]bool) (missing, extra []string) {
	for i := range want {
		if !got[i] {
			missing = append(missing, i.String())
		}
	}
	for i := range got {
		if !want[i] {
			extra = append(extra, i.String())
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	return missing, extra
}

// firstDifference walks two decoded objects and describes the first place
// they differ, with its path, or returns "".
func firstDifference(path string, a, b any) string {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: %v vs %v", path, a, b)
		}
		keys := map[string]bool{}
		for k := range av {
			keys[k] = true
		}
		for k := range bv {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			if d := firstDifference(path+"."+k, av[k], bv[k]); d != "" {
				return d
			}
		}
		return ""
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return fmt.Sprintf("%s: %v vs %v", path, a, b)
		}
		for i := range av {
			if d := firstDifference(fmt.Sprintf("%s[%d]", path, i), av[i], bv[i]); d != "" {
				return d
			}
		}
		return ""
	default:
		if fmt.Sprint(a) != fmt.Sprint(b) || (a == nil) != (b == nil) {
			return fmt.Sprintf("%s: %v vs %v", path, a, b)
		}
		return ""
	}
}

// imageRepository is an image reference without its tag or digest.
func imageRepository(ref string) string {
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref = ref[:i]
	}
	return ref
}

// deploymentSources are the Deployments whose Pods and flags are checked:
// deploy/default's with a shard of deploy/components/shard, and the chart's
// with every service, every flag value and a shard.
func deploymentSources(t *testing.T) map[string][]*unstructured.Unstructured {
	t.Helper()
	sharded, err := build(shardOverlay(t, []string{"a"}, ""), overlayDir)
	if err != nil {
		t.Fatal(err)
	}
	return map[string][]*unstructured.Unstructured{
		"deploy/default":                        ofKind(deployDefaultAll(t), "Deployment"),
		"deploy/default with a shard component": ofKind(sharded, "Deployment"),
		"charts/kuvryn-sync": ofKind(mustRenderChart(t, enabledValues(allServices())+
			"webhookReceiver: {enabled: true}\ndefaultServiceAccount: deployer\ndriftResyncInterval: 10m\nretryInterval: 1m\nshards: [a]\n"), "Deployment"),
	}
}

// deployment finds the service's Deployment by its component label, in
// deploy/default and in the chart alike.
func deployment(t *testing.T, objs []*unstructured.Unstructured, svc string) *unstructured.Unstructured {
	t.Helper()
	for _, d := range ofKind(objs, "Deployment") {
		if d.GetLabels()["app.kubernetes.io/component"] == svc {
			return d
		}
	}
	t.Fatalf("no Deployment of the %s rendered", svc)
	return nil
}

// manager returns the Deployment's only container.
func manager(t *testing.T, d *unstructured.Unstructured) map[string]any {
	t.Helper()
	containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	if len(containers) != 1 {
		t.Fatalf("%s has %d containers, want the manager alone", idOf(d), len(containers))
	}
	return containers[0].(map[string]any)
}

func stringsAt(t *testing.T, obj map[string]any, fields ...string) []string {
	t.Helper()
	s, _, err := unstructured.NestedStringSlice(obj, fields...)
	if err != nil {
		t.Fatalf("%s: %v", strings.Join(fields, "."), err)
	}
	return s
}

func envOf(t *testing.T, d *unstructured.Unstructured) []string {
	t.Helper()
	env, _, _ := unstructured.NestedSlice(manager(t, d), "env")
	var out []string
	for _, e := range env {
		e := e.(map[string]any)
		out = append(out, fmt.Sprintf("%v=%v", e["name"], e["value"]))
	}
	return out
}

func volume(d *unstructured.Unstructured, name string) map[string]any {
	vols, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "volumes")
	for _, v := range vols {
		if v := v.(map[string]any); v["name"] == name {
			return v
		}
	}
	return nil
}

func field(obj map[string]any, fields ...string) any {
	v, _, _ := unstructured.NestedFieldNoCopy(obj, fields...)
	return v
}

func wantEqual(t *testing.T, what string, got, want any) {
	t.Helper()
	if d := firstDifference(what, got, want); d != "" {
		t.Errorf("got vs want: %s", d)
	}
}
