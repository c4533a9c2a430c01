package packaging_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// chartCase is one set of enabled services for the chart.
type chartCase struct {
	name    string
	values  string
	enabled map[string]bool
	webhook bool
	// receiver: the receiver Service of the [RECEIVER] entries.
	receiver bool
	// console: the web service runs its console, behind its Service.
	console bool
}

// enabledValues writes values that enable exactly the services in enabled.
func enabledValues(enabled map[string]bool) string {
	var b strings.Builder
	for _, s := range services {
		fmt.Fprintf(&b, "%s: {enabled: %t}\n", s.key, enabled[s.name])
	}
	return b.String()
}

func allServices() map[string]bool {
	all := map[string]bool{}
	for _, s := range services {
		all[s.name] = true
	}
	return all
}

func without(set map[string]bool, name string) map[string]bool {
	out := map[string]bool{}
	for k, v := range set {
		out[k] = v && k != name
	}
	return out
}

func chartCases() []chartCase {
	all := allServices()
	cases := []chartCase{
		{name: "default values enable every service but the optional web console", enabled: without(all, "web"), webhook: true},
		{name: "every service enabled", values: enabledValues(all), enabled: all, webhook: true, console: true},
		{name: "console.enabled, the guide's switch, enables web", values: "console: {enabled: true}\n", enabled: all, webhook: true, console: true},
		{name: "webhookReceiver.enabled enables web and its receiver Service", values: "webhookReceiver: {enabled: true}\n",
			enabled: all, webhook: true, receiver: true},
		{name: "webhook disabled keeps the sync-controller without webhook objects",
			values: "syncController: {webhook: {enabled: false}}\n", enabled: without(all, "web"), webhook: false},
	}
	for _, s := range services {
		off := without(all, s.name)
		cases = append(cases, chartCase{
			name: s.name + " disabled", values: enabledValues(off), enabled: off, webhook: off["sync-controller"], console: off["web"],
		})
		alone := map[string]bool{s.name: true}
		cases = append(cases, chartCase{
			name: s.name + " alone", values: enabledValues(alone), enabled: alone, webhook: alone["sync-controller"], console: alone["web"],
		})
	}
	return cases
}

// TestChart_RendersOnlyEnabledServicesAndIsAcceptedByAPIServer renders the
// chart with default values, every service, each service disabled in turn
// and each service alone. Every rendering must be accepted by the API server
// as a dry-run Server-Side Apply and hold exactly the objects deploy/default
// has for the enabled services, with every ServiceAccount, ClusterRole and
// webhook Service it refers to.
func TestChart_RendersOnlyEnabledServicesAndIsAcceptedByAPIServer(t *testing.T) {
	installPrerequisites(t)
	kustomized := deployDefaultAll(t)
	for _, tc := range chartCases() {
		t.Run(tc.name, func(t *testing.T) {
			objs := mustRenderChart(t, tc.values)
			dryRunApply(t, "charts/kuvryn-sync", objs)

			want := expectedChartObjects(kustomized, tc.enabled, tc.webhook)
			if !tc.receiver {
				delete(want, id{"Service", systemNamespace, "kuvryn-sync-receiver"})
			}
			if !tc.console {
				delete(want, id{"Service", systemNamespace, "kuvryn-sync-console"})
			}
			missing, extra := diffIDs(ids(asDeployDefault(objs)), want)
			if len(missing) > 0 {
				t.Errorf("chart lacks objects deploy/default has for the enabled services: %v", missing)
			}
			if len(extra) > 0 {
				t.Errorf("chart renders objects deploy/default does not have for the enabled services: %v", extra)
			}
			checkReferences(t, objs)
		})
	}
}

// checkReferences fails when a rendered object points at a ServiceAccount,
// ClusterRole or Service that the same rendering does not hold.
func checkReferences(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	have := ids(objs)
	for _, d := range ofKind(objs, "Deployment") {
		sa, _, _ := unstructured.NestedString(d.Object, "spec", "template", "spec", "serviceAccountName")
		if want := (id{"ServiceAccount", d.GetNamespace(), sa}); !have[want] {
			t.Errorf("%s runs as %s, which is not rendered", idOf(d), want)
		}
	}
	for _, b := range ofKind(objs, "ClusterRoleBinding") {
		role, _, _ := unstructured.NestedString(b.Object, "roleRef", "name")
		if want := (id{"ClusterRole", "", role}); !have[want] {
			t.Errorf("%s binds %s, which is not rendered", idOf(b), want)
		}
		subjects, _, _ := unstructured.NestedSlice(b.Object, "subjects")
		if len(subjects) == 0 {
			t.Errorf("%s has no subjects", idOf(b))
		}
		for _, s := range subjects {
			s, _ := s.(map[string]any)
			want := id{"ServiceAccount", fmt.Sprint(s["namespace"]), fmt.Sprint(s["name"])}
			if !have[want] {
				t.Errorf("%s binds %s, which is not rendered", idOf(b), want)
			}
		}
	}
	for _, kind := range []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"} {
		for _, w := range ofKind(objs, kind) {
			hooks, _, _ := unstructured.NestedSlice(w.Object, "webhooks")
			for _, h := range hooks {
				name, _, _ := unstructured.NestedString(h.(map[string]any), "clientConfig", "service", "name")
				ns, _, _ := unstructured.NestedString(h.(map[string]any), "clientConfig", "service", "namespace")
				if want := (id{"Service", ns, name}); !have[want] {
					t.Errorf("%s calls %s, which is not rendered", idOf(w), want)
				}
			}
		}
	}
}

// TestChart_MatchesDeployDefaultObjectForObject renders every service and
// compares each object, under deploy/default's names, with its deploy/default
// counterpart: everything but metadata, which Helm labels, must be equal, so
// the two installs run the same Pods with the same flags, images, probes,
// RBAC and webhooks.
func TestChart_MatchesDeployDefaultObjectForObject(t *testing.T) {
	chartObjs := asDeployDefault(mustRenderChart(t, enabledValues(allServices())+"webhookReceiver: {enabled: true}\n"))
	for _, k := range deployDefaultAll(t) {
		if k.GetKind() == "Namespace" || k.GetKind() == "CustomResourceDefinition" {
			continue
		}
		c := find(chartObjs, k.GetKind(), k.GetName())
		if c == nil {
			t.Errorf("chart does not render %s", idOf(k))
			continue
		}
		if c.GetNamespace() != k.GetNamespace() {
			t.Errorf("%s: chart namespace %q, deploy/default %q", idOf(k), c.GetNamespace(), k.GetNamespace())
		}
		if d := firstDifference(k.GetKind(), comparable(c), comparable(k)); d != "" {
			t.Errorf("%s differs, chart vs deploy/default: %s", idOf(k), d)
		}
		if k.GetKind() == "Deployment" {
			chartLabels, _, _ := unstructured.NestedStringMap(c.Object, "spec", "template", "metadata", "labels")
			kustomizeLabels, _, _ := unstructured.NestedStringMap(k.Object, "spec", "template", "metadata", "labels")
			for key, v := range kustomizeLabels {
				if chartLabels[key] != v {
					t.Errorf("%s: chart Pod label %s=%q, deploy/default %q", idOf(k), key, chartLabels[key], v)
				}
			}
		}
	}
}

// comparable is the part of an object the API server acts on: all but its
// metadata, and for a Deployment all but its Pod labels, to which Helm adds
// its own.
func comparable(o *unstructured.Unstructured) any {
	c := runtime.DeepCopyJSON(o.Object)
	delete(c, "metadata")
	unstructured.RemoveNestedField(c, "spec", "template", "metadata", "labels")
	return c
}

// TestChart_CRDsAreTheGeneratedCRDs fails when charts/kuvryn-sync/crds
// drifts from the CRDs `make manifests` writes into deploy/crds: copy them
// over after regenerating.
func TestChart_CRDsAreTheGeneratedCRDs(t *testing.T) {
	chartCRDs := map[string][]byte{}
	for _, f := range loadChart(t).CRDObjects() {
		chartCRDs[filepath.Base(f.Filename)] = f.File.Data
	}
	generated, err := filepath.Glob(filepath.Join(root, "deploy", "crds", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range generated {
		base := filepath.Base(f)
		if base == "kustomization.yaml" {
			continue
		}
		want = append(want, base)
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := chartCRDs[base]; !ok {
			t.Errorf("charts/kuvryn-sync/crds lacks %s", base)
		} else if !bytes.Equal(got, data) {
			t.Errorf("charts/kuvryn-sync/crds/%s differs from deploy/crds/%s: copy it over", base, base)
		}
	}
	for base := range chartCRDs {
		if !slices.Contains(want, base) {
			t.Errorf("charts/kuvryn-sync/crds/%s is not generated into deploy/crds: remove it", base)
		}
	}
}

// TestChart_PassesHelmLint runs `helm lint`'s checks, with default values
// and with every service, and fails on any warning or error.
func TestChart_PassesHelmLint(t *testing.T) {
	for _, values := range []string{"", enabledValues(allServices())} {
		vals, err := chartutil.ReadValues([]byte(values))
		if err != nil {
			t.Fatal(err)
		}
		result := lint.AllWithKubeVersion(filepath.Join(root, "charts", "kuvryn-sync"), vals, systemNamespace, &kubeVersion)
		for _, m := range result.Messages {
			if m.Severity >= support.WarningSev {
				t.Errorf("helm lint with values %q: %s: %v", values, m.Path, m.Err)
			}
		}
	}
}
