package packaging_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestInstall_NamesAreTheGuides checks every name the operations guide
// prints, in deploy/default and in the chart under a release that is not
// the chart's name: the controller manager's Deployment (with its container
// manager, for `kubectl logs ... -c manager`) and ServiceAccount, the other
// services', and the Services. In the chart, every object is named after the
// release.
func TestInstall_NamesAreTheGuides(t *testing.T) {
	receiverOn, err := deployDefaultWithReceiver(t)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		source string
		objs   []*unstructured.Unstructured
		// name gives the guide's name of an object: raw for deploy/default,
		// <release>-kuvryn-sync + suffix for the chart.
		name func(raw, chartSuffix string) string
	}{{
		source: "deploy/default with the [RECEIVER] entries",
		objs:   receiverOn,
		name:   func(raw, _ string) string { return raw },
	}, {
		source: "charts/kuvryn-sync (release " + releaseName + ")",
		objs:   mustRenderChart(t, enabledValues(allServices())+"webhookReceiver: {enabled: true}\n"),
		name:   func(_, chartSuffix string) string { return chartPrefix + chartSuffix },
	}}
	for _, tc := range cases {
		t.Run(tc.source, func(t *testing.T) {
			have := ids(tc.objs)
			for _, s := range services {
				name := tc.name(s.raw, s.chartSuffix)
				for _, want := range []id{
					{"Deployment", systemNamespace, name},
					{"ServiceAccount", systemNamespace, name},
					{"Service", systemNamespace, name + "-metrics"},
				} {
					if !have[want] {
						t.Errorf("no %s for the %s", want, s.name)
					}
				}
				d := deployment(t, tc.objs, s.name)
				if d.GetName() != name {
					t.Errorf("the %s's Deployment is %s, want %s", s.name, idOf(d), name)
				}
				if got := manager(t, d)["name"]; got != "manager" {
					t.Errorf("%s: container %v, want manager", idOf(d), got)
				}
				if sa, _, _ := unstructured.NestedString(d.Object, "spec", "template", "spec", "serviceAccountName"); sa != name {
					t.Errorf("%s runs as ServiceAccount %q, want %s", idOf(d), sa, name)
				}
			}
			for _, want := range []id{
				{"Service", systemNamespace, tc.name("kuvryn-sync-receiver", "-receiver")},
				{"Service", systemNamespace, tc.name("kuvryn-sync-console", "-console")},
				{"Service", systemNamespace, tc.name("kuvryn-sync-webhook", "-webhook")},
			} {
				if !have[want] {
					t.Errorf("no %s", want)
				}
			}
		})
	}
	// The guide's example: the release kuvryn-sync installs
	// kuvryn-sync-kuvryn-sync.
	if d := find(mustRenderChartAs(t, "kuvryn-sync", ""), "Deployment", "kuvryn-sync-kuvryn-sync"); d == nil {
		t.Errorf("the release kuvryn-sync has no Deployment kuvryn-sync-kuvryn-sync")
	}
	for _, o := range cases[1].objs {
		if !strings.HasPrefix(o.GetName(), chartPrefix) {
			t.Errorf("chart renders %s, not named after the release (%s...)", idOf(o), chartPrefix)
		}
	}
}
