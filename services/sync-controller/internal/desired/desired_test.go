package desired

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/desiredstate"
	"github.com/kuvryn/kuvryn-sync/services/sync-controller/internal/hook"
)

// served is what the API server of these tests serves: kind -> namespaced.
var served = map[schema.GroupKind]bool{
	{Kind: "ConfigMap"}:                 true,
	{Kind: "Secret"}:                    true,
	{Kind: "Namespace"}:                 false,
	{Group: "apps", Kind: "Deployment"}: true,
	{Group: "batch", Kind: "Job"}:       true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:         false,
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}: false,
}

func scopeOf(gvk schema.GroupVersionKind) (bool, bool, error) {
	if gvk.Group == "broken.example.com" {
		return false, false, errors.New("looking up kind " + gvk.String() + ": discovery failed")
	}
	namespaced, known := served[gvk.GroupKind()]
	return namespaced, known, nil
}

func objects(t *testing.T, manifests ...string) []*unstructured.Unstructured {
	t.Helper()
	out := make([]*unstructured.Unstructured, 0, len(manifests))
	for _, m := range manifests {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(m), &obj.Object); err != nil {
			t.Fatalf("parsing %q: %v", m, err)
		}
		out = append(out, obj)
	}
	return out
}

const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec: {group: example.com, scope: Namespaced, names: {kind: Widget}}`

func TestPrepare_PlacesClaimsAndOrdersObjects(t *testing.T) {
	tests := []struct {
		name       string
		manifests  []string
		namespaces map[string]string // "Kind name" -> namespace after Prepare
		newKinds   []schema.GroupKind
		creates    []string
		waves      int
		preSync    int
	}{
		{
			name:       "a namespaced object without a namespace gets the destination's",
			manifests:  []string{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}"},
			namespaces: map[string]string{"ConfigMap settings": "shop"},
			waves:      1,
		},
		{
			name:       "a namespaced object keeps its own namespace",
			manifests:  []string{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: other}"},
			namespaces: map[string]string{"ConfigMap settings": "other"},
			waves:      1,
		},
		{
			name:       "a cluster-scoped object loses its namespace, as with kubectl",
			manifests:  []string{"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: reader, namespace: shop}"},
			namespaces: map[string]string{"ClusterRole reader": ""},
			waves:      1,
		},
		{
			name:       "a kind a CustomResourceDefinition of the desired state defines is new and takes its scope",
			manifests:  []string{crd, "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}"},
			namespaces: map[string]string{"Widget w": "shop", "CustomResourceDefinition widgets.example.com": ""},
			newKinds:   []schema.GroupKind{{Group: "example.com", Kind: "Widget"}},
			waves:      1,
		},
		{
			name:      "a Namespace of the desired state is one it creates",
			manifests: []string{"apiVersion: v1\nkind: Namespace\nmetadata: {name: payments}"},
			creates:   []string{"payments"},
			waves:     1,
		},
		{
			name: "hooks and waves are ordered apart",
			manifests: []string{
				"apiVersion: batch/v1\nkind: Job\nmetadata: {name: migrate, annotations: {sync.kuvryn.io/hook: pre-sync}}",
				"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: first, annotations: {sync.kuvryn.io/sync-wave: \"-1\"}}",
				"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}",
			},
			waves:   2,
			preSync: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := objects(t, tt.manifests...)
			ds, err := Prepare(objs, "shop", "shop/app", scopeOf)
			if err != nil {
				t.Fatalf("Prepare() error = %v", err)
			}
			for _, obj := range ds.Objects {
				if got := obj.GetAnnotations()[syncv1.OwnedByAnnotation]; got != "shop/app" {
					t.Errorf("%s %s: owned-by %q, want shop/app", obj.GetKind(), obj.GetName(), got)
				}
				if !ds.IDs[desiredstate.IDOf(obj)] {
					t.Errorf("%s %s is missing from IDs", obj.GetKind(), obj.GetName())
				}
				if want, ok := tt.namespaces[obj.GetKind()+" "+obj.GetName()]; ok && obj.GetNamespace() != want {
					t.Errorf("%s %s: namespace %q, want %q", obj.GetKind(), obj.GetName(), obj.GetNamespace(), want)
				}
			}
			if len(ds.NewKinds) != len(tt.newKinds) {
				t.Errorf("NewKinds = %v, want %v", ds.NewKinds, tt.newKinds)
			}
			for _, gk := range tt.newKinds {
				if !ds.NewKinds[gk] {
					t.Errorf("NewKinds = %v, want %v among them", ds.NewKinds, gk)
				}
			}
			if len(ds.Namespaces) != len(tt.creates) {
				t.Errorf("Namespaces = %v, want %v", ds.Namespaces, tt.creates)
			}
			for _, ns := range tt.creates {
				if !ds.Namespaces[ns] {
					t.Errorf("Namespaces = %v, want %s among them", ds.Namespaces, ns)
				}
			}
			if len(ds.Groups.Waves) != tt.waves || len(ds.Hooks(hook.PreSync)) != tt.preSync {
				t.Errorf("Prepare() = %d wave(s), %d pre-sync hook(s); want %d, %d", len(ds.Groups.Waves), len(ds.Hooks(hook.PreSync)), tt.waves, tt.preSync)
			}
			for _, obj := range ds.Hooks(hook.PreSync) {
				if ds.Stages[desiredstate.IDOf(obj)] != hook.PreSync {
					t.Errorf("Stages[%s] = %q, want %q", desiredstate.IDOf(obj), ds.Stages[desiredstate.IDOf(obj)], hook.PreSync)
				}
			}
			if n := len(ds.WaveObjects()); n != len(objs)-tt.preSync {
				t.Errorf("WaveObjects() has %d object(s), want %d", n, len(objs)-tt.preSync)
			}
		})
	}
}

func manyManifests(n int, format string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(format, i)
	}
	return out
}

func TestPrepare_RefusesInvalidDesiredStates(t *testing.T) {
	tests := []struct {
		name      string
		manifests []string
		mention   string
	}{
		{"no apiVersion", []string{"kind: ConfigMap\nmetadata: {name: a}"}, `object 0 (ConfigMap "a"): apiVersion is required`},
		{"no version", []string{"apiVersion: apps/\nkind: Deployment\nmetadata: {name: a}"}, "apiVersion is required"},
		{"no kind", []string{"apiVersion: v1\nmetadata: {name: a}"}, `object 0 ( "a"): kind is required`},
		{"no name", []string{"apiVersion: v1\nkind: ConfigMap\nmetadata: {}"}, "metadata.name is required"},
		{"unserved kind without a definition", []string{"apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}"},
			"kind Gadget.example.com is not served by the API server and no CustomResourceDefinition in the desired state defines it"},
		{"kind lookup failing", []string{"apiVersion: broken.example.com/v1\nkind: Thing\nmetadata: {name: t}"}, "discovery failed"},
		{"every problem counted", []string{"kind: A\nmetadata: {name: a}", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fine}", "apiVersion: v1\nmetadata: {name: c}"},
			"2 invalid object(s): object 0"},
		{"invalid sync-wave", []string{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, annotations: {sync.kuvryn.io/sync-wave: first}}"},
			"ConfigMap shop/a: annotation sync.kuvryn.io/sync-wave=\"first\": not an integer"},
		{"duplicate object", []string{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}"},
			"appears more than once in the desired state"},
		{"too many hooks", manyManifests(syncv1.MaxHookEntries+1, "apiVersion: batch/v1\nkind: Job\nmetadata: {name: job-%d, annotations: {sync.kuvryn.io/hook: pre-sync}}"),
			fmt.Sprintf("%d hooks; a rollout tracks at most %d", syncv1.MaxHookEntries+1, syncv1.MaxHookEntries)},
		{"too many waves", manyManifests(MaxWaves+1, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%[1]d, annotations: {sync.kuvryn.io/sync-wave: \"%[1]d\"}}"),
			fmt.Sprintf("%d sync waves; a rollout tracks at most %d", MaxWaves+1, MaxWaves)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ds, err := Prepare(objects(t, tt.manifests...), "shop", "shop/app", scopeOf)
			if err == nil {
				t.Fatalf("Prepare() = %d object(s), want an error mentioning %q", len(ds.Objects), tt.mention)
			}
			if !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("Prepare() error = %q, want it to mention %q", err, tt.mention)
			}
		})
	}
}
