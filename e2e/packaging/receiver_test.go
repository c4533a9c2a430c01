package packaging_test

import (
	"fmt"
	"regexp"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// receiverEntry is a commented [RECEIVER] line of deploy/default's
// kustomization.yaml; uncommenting it is dropping the leading '#'.
var receiverEntry = regexp.MustCompile(`(?m)^#(.*\[RECEIVER\])$`)

// deployDefaultWithReceiver builds deploy/default with its [RECEIVER]
// entries uncommented, as the guide tells users to.
func deployDefaultWithReceiver(t *testing.T) ([]*unstructured.Unstructured, error) {
	t.Helper()
	fs := deployInMemory(t)
	const path = "/deploy/default/kustomization.yaml"
	data, err := fs.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if n := len(receiverEntry.FindAll(data, -1)); n != 2 {
		return nil, fmt.Errorf("deploy/default/kustomization.yaml has %d commented [RECEIVER] entries, the guide says two", n)
	}
	if err := fs.WriteFile(path, receiverEntry.ReplaceAll(data, []byte("$1"))); err != nil {
		return nil, err
	}
	return build(fs, "/deploy/default")
}

// deployDefaultAll is deploy/default with everything it can install: the
// [RECEIVER] entries uncommented.
func deployDefaultAll(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	objs, err := deployDefaultWithReceiver(t)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// TestReceiver_EnablingItAddsTheFlagAndTheService follows the guide's "Push
// webhooks" both ways: deploy/default with its two [RECEIVER] entries
// uncommented, and the chart with webhookReceiver.enabled=true. Each adds
// --webhook-receiver-bind-address=:9292 to the web service alone and the
// Service <prefix>-receiver on port 80 in front of it, the API server
// accepts both, and they render the same objects.
func TestReceiver_EnablingItAddsTheFlagAndTheService(t *testing.T) {
	installPrerequisites(t)
	raw, err := deployDefaultWithReceiver(t)
	if err != nil {
		t.Fatal(err)
	}
	// With the console, as deploy/default runs the web service.
	chartObjs := mustRenderChart(t, "console: {enabled: true}\nwebhookReceiver: {enabled: true}\n")
	for _, tc := range []struct {
		source   string
		objs     []*unstructured.Unstructured
		receiver string
	}{
		{"deploy/default", raw, "kuvryn-sync-receiver"},
		{"charts/kuvryn-sync", chartObjs, chartPrefix + "-receiver"},
	} {
		t.Run(tc.source, func(t *testing.T) {
			dryRunApply(t, tc.source, tc.objs)
			for _, s := range services {
				args := stringsAt(t, manager(t, deployment(t, tc.objs, s.name)), "args")
				if got, want := slices.Contains(args, "--webhook-receiver-bind-address=:9292"), s.name == "web"; got != want {
					t.Errorf("%s args %v: receiver flag %t, want %t", s.name, args, got, want)
				}
			}
			svc := find(tc.objs, "Service", tc.receiver)
			if svc == nil {
				t.Fatalf("no Service %s", tc.receiver)
			}
			ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
			if len(ports) != 1 || fmt.Sprint(field(ports[0].(map[string]any), "port")) != "80" {
				t.Fatalf("Service %s ports %v, want port 80 alone", tc.receiver, ports)
			}
			target := field(ports[0].(map[string]any), "targetPort")
			web := manager(t, deployment(t, tc.objs, "web"))
			containerPorts, _, _ := unstructured.NestedSlice(web, "ports")
			found := false
			for _, p := range containerPorts {
				p := p.(map[string]any)
				if p["name"] == target {
					found = fmt.Sprint(p["containerPort"]) == "9292"
				}
			}
			if !found {
				t.Errorf("Service %s targets %v, which is not the web container's port 9292: %v", tc.receiver, target, containerPorts)
			}
		})
	}
	t.Run("the chart renders what deploy/default does", func(t *testing.T) {
		chart := asDeployDefault(chartObjs)
		for _, want := range []id{{"Service", systemNamespace, "kuvryn-sync-receiver"}, {"Deployment", systemNamespace, "kuvryn-sync-web"}} {
			k, c := find(raw, want.kind, want.name), find(chart, want.kind, want.name)
			if k == nil || c == nil {
				t.Fatalf("%s: deploy/default %t, chart %t", want, k != nil, c != nil)
			}
			if d := firstDifference(want.kind, comparable(c), comparable(k)); d != "" {
				t.Errorf("%s differs, chart vs deploy/default: %s", want, d)
			}
		}
	})
}
